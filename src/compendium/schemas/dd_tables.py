from ..params import P

SECTION = "dd_tables"
DATA = ()
SCHEMA = {
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
