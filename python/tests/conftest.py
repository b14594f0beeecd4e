import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"


@pytest.fixture
def testdata() -> pathlib.Path:
    return TESTDATA


@pytest.fixture
def binary() -> str:
    """The tpu-doctor CLI of the same build, to compare the module with."""
    path = os.environ.get("TPUD_BINARY", str(ROOT / "build" / "tpu-doctor"))
    if not os.path.exists(path):
        pytest.skip(f"no tpu-doctor binary at {path}")
    return path


@pytest.fixture(scope="session")
def sarif_schema():
    """A validator of the SARIF 2.1.0 schema (python3-jsonschema)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "python/tests/data/sarif-2.1.0.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
