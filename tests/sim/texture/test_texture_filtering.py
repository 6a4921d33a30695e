"""Properties of the texture unit's arithmetic (sim/texture/filtering.py)
and of the sampler on real device memory: 9-bit fixed-point weights,
address modes, the linear footprint, cube face selection, and 2D linear
sampling equal to separable 1D linear sampling."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg.sim.texture import filtering as flt
from gpudbg.sim.texture import sampler
from gpudbg.sim.texture.descriptors import AddressMode, FilterMode, Geometry, Image, Level, TextureState
from gpudbg.sim.texture.formats import CUarray_format

fracs = st.floats(0, 1, exclude_max=True, allow_nan=False, width=32)
coords = st.floats(-1e4, 1e4, allow_nan=False, width=32)
MODES = st.sampled_from(list(AddressMode))


@given(fracs)
def test_weights_are_k_over_256_within_half_a_step(f):
    w = float(flt.quantize_weight(np.array([f]))[0])
    assert (w * 256).is_integer() and 0 <= w <= 1
    assert abs(w - f) <= 1 / 512


@given(fracs, fracs)
def test_weights_are_monotonic(a, b):
    lo, hi = sorted((a, b))
    wl, wh = flt.quantize_weight(np.array([lo, hi]))
    assert wl <= wh


@given(coords)
def test_footprint_reconstructs_the_shifted_coordinate(u):
    i0, w = flt.linear_footprint(np.array([u], np.float32))
    assert abs(float(i0[0]) + float(w[0]) - (np.float32(u) - np.float32(0.5))) <= 1 / 512 + 1e-3 * max(1, abs(u)) * 2 ** -10


@given(st.integers(-10_000, 10_000), st.integers(1, 300), MODES)
def test_addressed_index_is_inside_or_border(i, n, mode):
    idx, inside = flt.address(np.array([i]), n, mode)
    assert 0 <= idx[0] < n
    assert bool(inside[0]) == (mode is not AddressMode.BORDER or 0 <= i < n)
    if 0 <= i < n:
        assert idx[0] == i                 # every mode leaves in-range texels alone


@given(st.integers(-10_000, 10_000), st.integers(1, 300))
def test_wrap_is_periodic_and_mirror_reflects(i, n):
    w1, _ = flt.address(np.array([i, i + n]), n, AddressMode.WRAP)
    assert w1[0] == w1[1]
    m, _ = flt.address(np.array([i, -1 - i, i + 2 * n]), n, AddressMode.MIRROR)
    assert m[0] == m[1] == m[2]


@given(st.floats(-1, 1, width=32), st.floats(-1, 1, width=32), fracs)
def test_lerp_stays_between_its_ends(a, b, f):
    w = flt.quantize_weight(np.array([f]))
    r = flt.lerp(np.array([[a]], np.float32), np.array([[b]], np.float32), w)[0, 0]
    assert min(a, b) - 1e-6 <= r <= max(a, b) + 1e-6


def test_cube_faces_of_the_axes():
    d = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], np.float32)
    face, s, t = flt.cube_face(d[:, 0], d[:, 1], d[:, 2])
    assert face.tolist() == [0, 1, 2, 3, 4, 5]
    assert np.all(s == 0.5) and np.all(t == 0.5)


@given(st.floats(-1, 1, width=32), st.floats(-1, 1, width=32), st.floats(-1, 1, width=32))
def test_cube_coordinates_are_normalized(x, y, z):
    face, s, t = flt.cube_face(np.array([x]), np.array([y]), np.array([z]))
    assert 0 <= face[0] < 6 and 0 <= s[0] <= 1 and 0 <= t[0] <= 1


# ------------------------------------------------------------------ the sampler over device memory
def _texture(img: np.ndarray, mode: AddressMode, filt: FilterMode) -> tuple[GlobalMemory, TextureState]:
    mem = GlobalMemory(capacity=1 << 20)
    h, w = img.shape
    a = mem.alloc(img.nbytes, AllocationKind.ARRAY)
    mem.write(a.base, img.tobytes())
    level = Level(a.base, w, h, 1, w * 4, w * 4 * h, w * 4 * h)
    image = Image(CUarray_format.CU_AD_FORMAT_FLOAT, 1, Geometry.D2, (level,))
    return mem, TextureState(image, (mode,) * 3, filt, normalized_coords=True, border_color=(0.5, 0, 0, 0))


images = st.integers(1, 6).flatmap(lambda h: st.integers(1, 6).map(lambda w: (h, w))).flatmap(
    lambda hw: st.lists(st.floats(-4, 4, width=32), min_size=hw[0] * hw[1], max_size=hw[0] * hw[1]).map(
        lambda v: np.array(v, np.float32).reshape(hw)))


@settings(max_examples=60, deadline=None)
@given(images, MODES, st.floats(-2, 3, width=32), st.floats(-2, 3, width=32))
def test_2d_linear_is_separable_linear(img, mode, u, v):
    """A 2D linear sample is the y-lerp of two x-lerps, each x-lerp being a
    1D linear sample of a row: checks footprint, addressing and border."""
    mem, tex = _texture(img, mode, FilterMode.LINEAR)
    got = sampler.sample(mem, tex, [np.array([u], np.float32), np.array([v], np.float32)],
                         np.zeros(1, np.int64))[0, 0]
    h, w = img.shape
    i0, a = flt.linear_footprint(np.array([u * np.float32(w)], np.float32))
    j0, b = flt.linear_footprint(np.array([v * np.float32(h)], np.float32))

    def texel(i, j):
        (ii, iin), (jj, jin) = flt.address(np.array([i]), w, mode), flt.address(np.array([j]), h, mode)
        return np.float32(0.5) if not (iin[0] and jin[0]) else img[jj[0], ii[0]]

    rows = [(1 - a[0]) * texel(i0[0], j) + a[0] * texel(i0[0] + 1, j) for j in (j0[0], j0[0] + 1)]
    want = np.float32((1 - b[0]) * np.float32(rows[0]) + b[0] * np.float32(rows[1]))
    assert abs(got - want) <= 1e-5 * max(1.0, abs(float(want)))


@settings(max_examples=40, deadline=None)
@given(images, MODES, st.floats(-2, 3, width=32), st.floats(-2, 3, width=32))
def test_point_samples_read_one_texel_or_the_border(img, mode, u, v):
    mem, tex = _texture(img, mode, FilterMode.POINT)
    got = sampler.sample(mem, tex, [np.array([u], np.float32), np.array([v], np.float32)],
                         np.zeros(1, np.int64))[0]
    h, w = img.shape
    i, j = int(np.floor(np.float32(u) * np.float32(w))), int(np.floor(np.float32(v) * np.float32(h)))
    if mode is AddressMode.BORDER and not (0 <= i < w and 0 <= j < h):
        assert got.tolist() == [0.5, 0.0, 0.0, 0.0]   # the whole border color
    else:
        assert got[0] in set(img.ravel().tolist())
        assert got[1:].tolist() == [0.0, 0.0, 1.0]    # missing channels read (., 0, 0, 1)
