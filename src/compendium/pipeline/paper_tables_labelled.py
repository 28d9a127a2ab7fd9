"""The labelled-distillation papers' printed numbers that the stages show beside ours (always labelled
"paper"): DWA's cross-architecture Tables 4 (CIFAR-100) and 9 (ImageNet-1K)."""

#: DWA Table 4 (CIFAR-100), the paper's numbers per (distilled by, method, ipc): MobileNetV2 / ShuffleNet /
#: EfficientNet / VGG-16 / ResNet-50 / ConvNet-128 ("–": not reported).
DWA_TABLE4 = {
    ("resnet18", "sre2l", 10): "16.1 / 11.8 / 11.1 / 19.2 / 22.4 / 19.4",
    ("resnet18", "dwa", 10): "27.8 / 19.4 / 20.2 / 30.0 / 35.2 / 27.3",
    ("convnet", "sre2l", 10): "28.7 / 25.3 / 18.0 / 21.5 / 41.8 / –",
    ("convnet", "dwa", 10): "37.3 / 25.3 / 24.5 / 29.6 / 47.1 / 47.6",
    ("resnet18", "sre2l", 50): "43.2 / 27.5 / 24.9 / 40.4 / 52.8 / 19.4",
    ("resnet18", "dwa", 50): "53.6 / 41.7 / 40.7 / 51.6 / 60.6 / 37.0",
    ("convnet", "sre2l", 50): "48.8 / 49.3 / 45.7 / 38.9 / 53.4 / –",
    ("convnet", "dwa", 50): "53.5 / 44.37 / 45.7 / 38.9 / 56.3 / 59.0",
}
DWA_TABLE4_DISTILLERS = {"convnet": "ConvNet-128", "resnet18": "ResNet-18"}  # the paper's names of its blocks
#: DWA Table 9 (ImageNet-1K) per (distilled by, method): DeiT-Tiny / ResNet-18 / ResNet-50 / ResNet-101.
DWA_TABLE9 = {
    ("resnet18", "sre2l"): "15.41 / 46.80 / 55.60 / 60.81",
    ("resnet18", "dwa"): "22.72 / 55.20 / 62.30 / 63.3",
    ("vit_bn", "sre2l"): "25.36 / 24.69 / 31.15 / 33.16",
    ("vit_bn", "dwa"): "37.0 / 32.64 / 40.77 / 43.15",
}
