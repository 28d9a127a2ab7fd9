from ..params import P

SECTION = "ssdd_teacher"
DATA = ("fashion-mnist", "digits")
SCHEMA = {
    "seed": P("int", "seed of the training subset, the pool and the networks", low=0),
    "width": P("int", "ConvNet-3 width of the teacher (BatchNorm; flattened 3x3 features: d_y = 9 width)", low=4, high=1024),
    "train_n": P("int", "Barlow Twins training images", low=100, high=60000),
    "epochs": P("int", "Barlow Twins epochs", low=1, high=1000),
    "batch_size": P("int", "Barlow Twins batch size", low=8),
    "lr": P("float", "AdamW learning rate", low=0.0, high=1.0),
    "weight_decay": P("float", "AdamW weight decay", low=0.0),
    "head_mult": P("float", "projector width multiplier (of 2048)", low=0.01, high=4.0),
    "lambd": P("float", "Barlow Twins off-diagonal weight (5e-3)", low=0.0, high=1.0),
    "pool_n": P("int", "real images the distillation draws from (their targets are cached)", low=100, high=60000),
    "free_teachers": P("list[str]", "free teachers: 'rand' (a seeded untrained teacher architecture) or 'trained:<file>'"),
    "probe_train_n": P("int", "Fashion-MNIST images of the teacher's linear probe", low=100, high=60000),
    "probe_test_n": P("int", "Fashion-MNIST test images of the probe", low=100, high=10000),
    "probe_epochs": P("int", "probe epochs (Adam, z-scored features)", low=1),
    "device": P("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
