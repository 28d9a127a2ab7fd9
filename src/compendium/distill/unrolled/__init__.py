"""Methods that differentiate through unrolled training: DD, soft-label DD, label distillation, GTN,
Mnemonics, text DD, and the NAS proxies built on them."""
