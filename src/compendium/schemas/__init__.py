"""One module per pipeline stage: ``SECTION`` (its params.yaml section and notebook name),
``SCHEMA`` (its keys, see :class:`compendium.params.P`) and ``DATA`` (the shipped datasets it
reads, checked before the notebook starts)."""
