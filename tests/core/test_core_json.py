import base64
import io
import json as std_json
import os
import pickle
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

from poly import _native
from poly.core import DataFormatError, PolyException, constants
from poly.core import json as poly_json
from poly.core.json import Decoder, Encoder, add_json_methods, from_json, load_json, save_json, to_json

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
]


def _arrays(dtype):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((2, 3, 4)) * 100
    arr = (base > 0) if dtype == "bool" else base.astype(dtype)
    return {
        "full": arr,
        "scalar": np.array(arr.flat[0], dtype=arr.dtype),
        "empty": np.zeros((0, 3), dtype=arr.dtype),
        "fortran": np.asfortranarray(arr),
        "strided": arr[:, ::2, 1:],
    }


def assert_same_array(a, b):
    assert isinstance(b, np.ndarray)
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype, tmp_path):
    arrays = _arrays(dtype)
    path = tmp_path / "arrays.json"
    save_json(arrays, path)
    loaded = load_json(path)
    assert list(loaded) == list(arrays)
    for key, arr in arrays.items():
        assert_same_array(arr, loaded[key])
    assert loaded["fortran"].flags.f_contiguous


def test_round_trip_nested_structures():
    obj = {
        "inputs": [{"x": np.arange(6, dtype=np.float32).reshape(2, 3)}, {"x": np.ones(1, dtype=np.int64)}],
        "meta": {"name": "run", "count": 2, "ratio": 0.5, "flag": True, "none": None, "tags": ["a", "b"]},
        "deep": [[[np.array(True)]]],
    }
    loaded = from_json(to_json(obj))
    assert isinstance(loaded, OrderedDict)
    assert loaded["meta"] == obj["meta"]
    assert_same_array(obj["inputs"][0]["x"], loaded["inputs"][0]["x"])
    assert_same_array(obj["inputs"][1]["x"], loaded["inputs"][1]["x"])
    assert_same_array(obj["deep"][0][0][0], loaded["deep"][0][0][0])


def test_a_saved_file_holds_to_json_s_text_byte_for_byte(tmp_path):
    # save_json splices the arrays' base64 payloads into the text as bytes (never escaped as
    # strings): the file must be exactly what to_json gives, whatever the arrays, the strings
    # around them (one that looks like a placeholder included) and the file object it goes to.
    obj = OrderedDict(
        first=[np.arange(10, dtype=np.float32), {"nested": np.ones((3, 4), np.int8), "empty": np.zeros(0)}],
        text="poly-payload-0123456789abcdef-7",
        more=[np.full((2, 2), i, dtype=np.float64) for i in range(5)],
        unicode="\u00e9t\u00e9 \u2603",
    )
    path = tmp_path / "obj.json"
    save_json(obj, path)
    assert path.read_bytes() == to_json(obj).encode("ascii")
    text_file = io.StringIO()
    save_json(obj, text_file)  # a text stream takes the text
    assert text_file.getvalue() == to_json(obj)
    back = load_json(path)
    assert back["text"] == obj["text"] and np.array_equal(back["more"][4], obj["more"][4])


def test_numpy_scalars_become_json_numbers():
    assert std_json.loads(to_json({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True)})) == {
        "a": 3,
        "b": 0.5,
        "c": True,
    }


def test_array_encoding_is_polygraphy_format():
    arr = np.arange(4, dtype=np.float32)
    text = to_json({"a": arr})
    raw = std_json.loads(text)
    assert list(raw["a"]) == ["array", "polygraphy_class"]
    assert raw["a"]["polygraphy_class"] == "ndarray"
    buffer = io.BytesIO()
    np.save(buffer, arr, allow_pickle=False)
    assert base64.b64decode(raw["a"]["array"]) == buffer.getvalue()
    assert text == std_json.dumps(raw, indent=4)


@pytest.mark.parametrize(
    "name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "int4"]
)
def test_round_trip_ml_dtypes(name, tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, name):
        pytest.skip(f"ml_dtypes has no {name}")
    dtype = np.dtype(getattr(ml_dtypes, name))
    values = np.array([[0, 1, -2], [3, -4, 5]], dtype=np.float32)
    arr = values.astype(dtype)
    path = tmp_path / "ml.json"
    scalar = np.array(arr[0, 1])
    save_json({"a": arr, "s": scalar, "e": arr[:0]}, path)
    loaded = load_json(path)
    for key, expected in (("a", arr), ("s", scalar), ("e", arr[:0])):
        assert loaded[key].dtype == dtype
        assert loaded[key].shape == expected.shape
        assert loaded[key].tobytes() == expected.tobytes()


def test_bfloat16_without_ml_dtypes_loads_raw_bytes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arr = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    path = tmp_path / "bf16.json"
    save_json([arr], path)
    # A fresh interpreter where ml_dtypes cannot be imported (and so never registered bfloat16).
    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "from poly.core import load_json\n"
        f"a = load_json({str(path)!r})[0]\n"
        "print(a.dtype.kind, a.dtype.itemsize, a.tobytes().hex())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert "pip install ml-dtypes" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == f"V 2 {arr.tobytes().hex()}"


def _write_payload(path, npy_bytes, key="array"):
    doc = {"x": {key: base64.b64encode(npy_bytes).decode(), "polygraphy_class": "ndarray"}}
    path.write_text(std_json.dumps(doc, indent=4))


def _assert_single_line(err, path):
    message = str(err.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_pickled_object_array_is_refused(tmp_path):
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    path = tmp_path / "evil.json"
    _write_payload(path, buffer.getvalue())
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    message = _assert_single_line(err, path)
    assert "object array" in message and "pickle" in message
    assert isinstance(err.value, ValueError) and isinstance(err.value, PolyException)


class _Exploit:
    def __reduce__(self):
        return (open, (os.environ["POLY_TEST_MARKER"], "w"))


def test_raw_pickle_payload_is_refused_and_never_run(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("POLY_TEST_MARKER", str(marker))
    path = tmp_path / "pickle.json"
    _write_payload(path, pickle.dumps(_Exploit()))
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    assert "pickle" in _assert_single_line(err, path)
    assert not marker.exists()


def test_object_array_in_npz_payload_is_refused(tmp_path):
    buffer = io.BytesIO()
    np.savez(buffer, a=np.array([object()], dtype=object))
    path = tmp_path / "evil_npz.json"
    _write_payload(path, buffer.getvalue())
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    assert "object array" in _assert_single_line(err, path)


def test_legacy_npz_payload_loads(tmp_path):
    buffer = io.BytesIO()
    np.savez(buffer, arr_0=np.arange(5, dtype=np.int32))
    path = tmp_path / "npz.json"
    _write_payload(path, buffer.getvalue())
    assert_same_array(np.arange(5, dtype=np.int32), load_json(path)["x"])


def test_legacy_latin1_payload_and_legacy_marker():
    buffer = io.BytesIO()
    np.save(buffer, np.arange(3, dtype=np.int16))
    doc = {
        "__polygraphy_encoded_ndarray": constants.LEGACY_TYPE_MARKER,
        "array": buffer.getvalue().decode("latin-1"),
    }
    assert_same_array(np.arange(3, dtype=np.int16), from_json(std_json.dumps(doc)))


def test_truncated_file(tmp_path):
    path = tmp_path / "data.json"
    save_json({"x": np.arange(100, dtype=np.float64)}, path)
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    assert "malformed JSON" in _assert_single_line(err, path)


@pytest.mark.parametrize("cut", [1, 4, 40])
def test_truncated_base64_payload(tmp_path, cut):
    buffer = io.BytesIO()
    np.save(buffer, np.arange(100, dtype=np.float64))
    encoded = base64.b64encode(buffer.getvalue()).decode()[:-cut]
    path = tmp_path / "cut.json"
    path.write_text(std_json.dumps({"array": encoded, "polygraphy_class": "ndarray"}))
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    message = _assert_single_line(err, path)
    assert "base64" in message or "truncated" in message


def test_empty_and_malformed_files(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(DataFormatError, match="empty"):
        load_json(empty)
    bad = tmp_path / "bad.json"
    bad.write_text("{'single': 'quotes'}")
    with pytest.raises(DataFormatError) as err:
        load_json(bad)
    assert "line 1" in _assert_single_line(err, bad)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataFormatError):
        load_json(binary)


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_json(tmp_path / "absent.json")


def test_payload_must_be_a_string():
    with pytest.raises(DataFormatError, match="payload"):
        from_json('{"array": 5, "polygraphy_class": "ndarray"}')


def test_unknown_type_is_refused(tmp_path):
    path = tmp_path / "unknown.json"
    path.write_text('{"polygraphy_class": "NoSuchThing", "x": 1}')
    with pytest.raises(DataFormatError, match="NoSuchThing") as err:
        load_json(path)
    _assert_single_line(err, path)


def test_dtype_hint_cannot_forge_object_arrays(tmp_path):
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(2, dtype="V8"))
    path = tmp_path / "forge.json"
    doc = {
        "array": base64.b64encode(buffer.getvalue()).decode(),
        "poly_dtype": "object",
        "polygraphy_class": "ndarray",
    }
    path.write_text(std_json.dumps(doc))
    with pytest.raises(DataFormatError):
        load_json(path)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


@Encoder.register(Point)
def _encode_point(point):
    return {"x": point.x, "y": point.y}


@Decoder.register(Point)
def _decode_point(dct):
    return Point(dct["x"], dct["y"])


def test_registered_type_round_trip():
    text = to_json([Point(1, np.arange(2))])
    raw = std_json.loads(text)
    assert raw[0]["polygraphy_class"] == "Point"
    (point,) = from_json(text)
    assert isinstance(point, Point) and point.x == 1
    assert_same_array(np.arange(2), point.y)


def test_registered_decoder_failure_is_a_data_format_error():
    with pytest.raises(DataFormatError, match="Point"):
        from_json('{"polygraphy_class": "Point", "x": 1}', source="points.json")


def test_duplicate_type_name_for_another_class_is_refused():
    class Point:  # same name, different class
        pass

    with pytest.raises(PolyException, match="Duplicate"):
        Decoder.register(Point)(lambda dct: Point())


def test_reregistering_the_same_class_replaces_the_decoder():
    """A second registration for the same class (a reloaded module) is the decoder used from
    then on, under the class name and the legacy marker alike."""
    text = to_json(Point(1, 2))
    legacy = std_json.dumps({"__polygraphy_encoded_Point": constants.LEGACY_TYPE_MARKER, "x": 1, "y": 2})
    assert type(from_json(text)) is Point

    @Decoder.register(Point)
    def _decode_point_again(dct):
        return ("replaced", dct["x"], dct["y"])

    try:
        assert from_json(text) == ("replaced", 1, 2)
        assert from_json(legacy) == ("replaced", 1, 2)
    finally:
        Decoder.register(Point)(_decode_point)  # later tests in this process decode Points again
    assert type(from_json(text)) is Point


@add_json_methods("pair")
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


@Encoder.register(Pair)
def _encode_pair(pair):
    return {"a": pair.a, "b": pair.b}


@Decoder.register(Pair)
def _decode_pair(dct):
    return Pair(dct["a"], dct["b"])


def test_add_json_methods(tmp_path, capsys):
    path = tmp_path / "pair.json"
    Pair(1, np.float32([2.5])).save(path)
    loaded = Pair.load(path)
    assert loaded.a == 1 and loaded.b.dtype == np.float32
    assert Pair.from_json(Pair(3, 4).to_json()).b == 4
    assert "Saving pair to" in capsys.readouterr().out
    with pytest.raises(PolyException, match="cannot be decoded into a Pair"):
        Pair.from_json("[1, 2]")


def test_save_and_load_file_objects():
    buffer = io.StringIO()
    save_json({"a": np.arange(3)}, buffer)
    assert_same_array(np.arange(3), load_json(buffer)["a"])


def test_save_json_is_atomic(tmp_path):
    path = tmp_path / "keep.json"
    save_json({"v": 1}, path)
    with pytest.raises(TypeError):
        save_json({"v": object()}, path)
    assert load_json(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["keep.json"]


def test_save_json_creates_parent_directories(tmp_path):
    path = tmp_path / "deep" / "er" / "x.json"
    save_json([1], path)
    assert load_json(path) == [1]


def test_property_round_trip():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    dtypes = st.one_of(
        hnp.boolean_dtypes(), hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(), hnp.floating_dtypes()
    )
    arrays = hnp.arrays(dtype=dtypes, shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.dictionaries(st.text(max_size=8), arrays, max_size=3))
    def check(feed):
        loaded = from_json(to_json([feed]))[0]
        assert list(loaded) == list(feed)
        for key, arr in feed.items():
            assert loaded[key].dtype == arr.dtype and loaded[key].shape == arr.shape
            assert loaded[key].tobytes() == arr.tobytes()

    check()


# -- large files: long array payloads cut out of the text before the JSON parse ----------------

def _large_document():
    """A document of about 7 MB (the cut starts at 4 MiB of text) with six long array payloads,
    short ones, and strings that look like payloads but are none."""
    rng = np.random.default_rng(4)
    arrays = {f"out{i}": rng.standard_normal((1, 8, 128, 128)).astype(np.float32) for i in range(6)}
    arrays["small"] = np.arange(10, dtype=np.int64)
    return {
        "outputs": arrays,
        "note": '"array": "' + "A" * 70_000 + '"',  # escaped in the file: no key
        "plain": {"array": "QUJD" * 20_000},  # an "array" key of a dict that is no array
        "escaped": {"array": "QUJD" * 20_000 + "\n"},  # an escape inside: parsed as it is
    }


@pytest.fixture
def decoded_from(monkeypatch):
    """What the native base64 decoder was handed, by type: memoryviews are cut payloads."""
    seen = []
    b64decode = _native.b64decode

    def recording(data):
        seen.append(type(data).__name__)
        return b64decode(data)

    monkeypatch.setattr(_native, "b64decode", recording)
    return seen


def test_a_large_file_s_long_payloads_are_decoded_where_they_lie(tmp_path, decoded_from):
    doc = _large_document()
    path = tmp_path / "large.json"
    save_json(doc, path)
    assert path.stat().st_size > 1 << 22
    back = load_json(path)
    for name, arr in doc["outputs"].items():
        assert_same_array(arr, back["outputs"][name])
        # writable, and (long payloads) a view of the native decoder's bytearray: no copy after it
        root = back["outputs"][name]
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        assert back["outputs"][name].flags.writeable
        assert isinstance(root, np.ndarray) == (name == "small")
    assert back["note"] == doc["note"] and back["plain"] == doc["plain"] and back["escaped"] == doc["escaped"]
    assert decoded_from.count("memoryview") == 6  # the six long payloads, cut out of the text
    # the same file parsed whole gives the same objects
    decoded_from.clear()
    whole = from_json(path.read_text())
    assert "memoryview" not in decoded_from
    assert all(np.array_equal(whole["outputs"][k], back["outputs"][k]) for k in doc["outputs"])
    assert {k: whole[k] for k in ("note", "plain", "escaped")} == {k: back[k] for k in ("note", "plain", "escaped")}


@pytest.mark.parametrize("damage", ["payload", "truncated", "utf-8", "no array"])
def test_a_damaged_large_file_reads_as_it_would_whole(tmp_path, damage, monkeypatch):
    # any error in the cut text sends the whole text through the parser: the message is the one
    # the uncut parse gives (line and column included)
    path = tmp_path / "large.json"
    save_json(_large_document(), path)
    data = path.read_bytes()
    payload = data.index(b'"array": "') + len(b'"array": "') + 50_000
    if damage == "payload":
        data = data[:payload] + b"*" + data[payload + 1:]
    elif damage == "truncated":
        data = data[:payload]
    elif damage == "utf-8":
        data = data[:payload] + b"\xff" + data[payload + 1:]
    else:  # the first array entry's type marker renamed: its payload stays a string
        data = data.replace(b'"polygraphy_class": "ndarray"', b'"polygraphy_class": "ndarrax"', 1)
    path.write_bytes(data)
    with pytest.raises(DataFormatError) as cut_err:
        load_json(path)
    monkeypatch.setattr(poly_json, "_CUT_MIN_TEXT", 1 << 62)  # parsed whole
    with pytest.raises(DataFormatError) as whole_err:
        load_json(path)
    assert str(cut_err.value) == str(whole_err.value)


@pytest.fixture
def mappings(monkeypatch):
    """Every mapping ``mapped_file`` makes, recorded (to check each is closed when it returns)."""
    import mmap

    from poly.core.files import read_write

    made = []

    class Recorded(mmap.mmap):
        def __new__(cls, *args, **kwargs):
            m = super().__new__(cls, *args, **kwargs)
            made.append(m)
            return m

    monkeypatch.setattr(read_write.mmap, "mmap", Recorded)
    return made


def test_a_large_file_is_read_through_a_mapping_closed_on_return(tmp_path, mappings):
    doc = _large_document()
    path = tmp_path / "large.json"
    save_json(doc, path)
    back = load_json(path)
    assert len(mappings) == 1 and mappings[0].closed  # mapped, not read into a buffer; closed after
    for name, arr in doc["outputs"].items():
        assert_same_array(arr, back["outputs"][name])  # (the arrays outlive the mapping)
    # a damaged one: closed too, and the message is the one its bytes read whole give
    data = path.read_bytes()
    cut = data.index(b'"array": "') + 5_000
    path.write_bytes(data[:cut] + b"*" + data[cut + 1:])
    with pytest.raises(DataFormatError) as err:
        load_json(path)
    assert len(mappings) == 2 and mappings[1].closed
    with pytest.raises(DataFormatError) as whole_err:
        from_json(path.read_bytes()[:], source=str(path))
    assert str(err.value) == str(whole_err.value)
    # a small file is read whole, unmapped
    save_json({"x": np.arange(3)}, tmp_path / "small.json")
    assert np.array_equal(load_json(tmp_path / "small.json")["x"], np.arange(3)) and len(mappings) == 2


def test_mapped_file_reads_what_it_cannot_map(tmp_path):
    from poly.core.files.read_write import mapped_file

    (tmp_path / "empty").write_bytes(b"")
    with mapped_file(tmp_path / "empty") as data:
        assert data == b""  # (mmap refuses an empty file)
    (tmp_path / "some").write_bytes(b"abc" * 1000)
    with mapped_file(tmp_path / "some") as data:
        assert data[:] == b"abc" * 1000 and len(data) == 3000
    with pytest.raises(FileNotFoundError), mapped_file(tmp_path / "missing"):
        pass
