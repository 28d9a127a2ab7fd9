from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "data_overview"
DATA = ("fashion-mnist", "digits")
SCHEMA = {
    "seed": Param("int", "seed for the sample grids", low=0, high=SEED_MAX),
    "grid_per_class": Param("int", "images per class in the sample grids", low=1, high=20),
    "digits_size": Param("int", "side the 8x8 digits are upsampled to on load", low=8, high=64),
    "stats_chunk": Param("int", "images per chunk when computing pixel statistics", low=1, high=100_000),
    "dpi": Param("int", "resolution of saved PNG figures (<= 150 keeps reports/ lean)", low=50, high=150),
}
