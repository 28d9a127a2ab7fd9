"""What every experiment stands on: paths, datasets, networks, augmentation, PCA, linear probes and kNN,
devices, the worker pool, shared losses and the text corpus. Imports nothing else of the package."""
