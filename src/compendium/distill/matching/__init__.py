"""Matching methods: gradient matching (DC), with siamese augmentation (DSA), and distribution
matching (DM)."""
