"""The labelled-distillation papers' printed numbers that the stages show beside ours (always labelled
"paper"): DWA's Tables 1 (CIFAR-10, ResNet-18), 3 (its ladder) and its cross-architecture Tables 4 (CIFAR-100)
and 9 (ImageNet-1K), and ReLA's Table 5 (CIFAR-10). DC's and DSA's Fashion-MNIST numbers are
:data:`compendium.distill.methods.papers.FMNIST_CONVNET` (the study of DC's protocol reads them too)."""

#: DWA Table 1, CIFAR-10 with a ResNet-18, per method and ipc.
DWA_TABLE1_CF10_R18 = {"SRe2L": {10: "27.2 ± 0.4", 50: "47.5 ± 0.5"}, "DWA": {10: "32.6 ± 0.4", 50: "53.1 ± 0.3"}}
#: DWA Table 3 (CIFAR-100, ResNet-18, ipc 10), the rungs of its ladder the paper prints, by our arm's name.
DWA_TABLE3 = {"E: + decoupled var": "30.6 ± 0.7", "F: + random adjust": "14.9 ± 0.1", "dwa": "39.6 ± 0.6"}
#: the same ladder at ipc 50, where the paper finds the random adjustment no longer hurts.
DWA_TABLE3_IPC50 = {"E: + decoupled var": "56.1 ± 0.4", "F: + random adjust": "56.2 ± 0.6", "dwa": "60.3 ± 0.5"}
#: ReLA Table 5, the CIFAR-10 rows per (method, student): ipc 1 / 10 / 50.
RELA_TABLE5_CF10 = {
    ("SRe2L", "convnet"): ("22.2 ± 1.1", "39.6 ± 0.4", "57.7 ± 0.4"),
    ("RDED", "convnet"): ("28.9 ± 0.4", "56.0 ± 0.1", "71.1 ± 0.2"),
    ("ReLA", "convnet"): ("40.3 ± 0.4", "67.0 ± 0.4", "77.3 ± 0.1"),
    ("SRe2L", "resnet18"): ("19.9 ± 0.9", "39.4 ± 0.9", "62.8 ± 1.2"),
    ("RDED", "resnet18"): ("27.8 ± 0.4", "47.3 ± 0.5", "76.4 ± 0.4"),
    ("ReLA", "resnet18"): ("35.0 ± 0.2", "74.7 ± 0.1", "89.2 ± 0.1"),
}

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
