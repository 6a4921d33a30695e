"""driver/params.py: a kernel without parameters packs to no bytes when
called without arguments (None, an empty list or tuple), and refuses any
argument or a value that is not a sequence, as for any kernel."""
import types

import pytest

from gpudbg.driver.params import pack_params
from gpudbg.driver.status import EngineError

NONE = types.SimpleNamespace(name="empty", params=(), param_size=0)


@pytest.mark.parametrize("args", [None, [], ()])
def test_no_arguments_pack_to_nothing(args):
    assert pack_params(NONE, args) == b""


def test_an_argument_to_a_kernel_without_parameters_is_refused():
    with pytest.raises(EngineError, match="empty takes 0 parameters, 1 given"):
        pack_params(NONE, [1])


@pytest.mark.parametrize("args", ["", b"", 5])
def test_a_value_that_is_not_a_sequence_is_refused(args):
    with pytest.raises(EngineError, match="kernelParams must be a sequence"):
        pack_params(NONE, args)
