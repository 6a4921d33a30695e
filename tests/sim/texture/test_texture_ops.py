"""The texture instructions CUDA C++ rarely spells, in hand-written PTX
run through the mc* runtime: txq and suq (every queried attribute,
txq.level), istypep, tex.cube on a cubemap array, tex.a1d, tex.grad on a
mipmapped texture, sust.p (formatted stores), sured.b (colliding
reductions), and the load-time rejections (independent mode, .texref
operands, multisample geometries)."""
import numpy as np
import pytest

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
H2D, D2H = mc.mcMemcpyKind.mcMemcpyHostToDevice, mc.mcMemcpyKind.mcMemcpyDeviceToHost
FLOAT = mc.mcChannelFormatKind.mcChannelFormatKindFloat
UNSIGNED = mc.mcChannelFormatKind.mcChannelFormatKindUnsigned
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

PTX = HEAD + r"""
.visible .entry queries(.param .u64 tex, .param .u64 surf, .param .u64 out)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<24>;
    .reg .pred %p<5>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [surf];
    ld.param.u64 %rd3, [out];
    txq.width.b32 %r1, [%rd1];
    txq.height.b32 %r2, [%rd1];
    txq.depth.b32 %r3, [%rd1];
    txq.channel_data_type.b32 %r4, [%rd1];
    txq.channel_order.b32 %r5, [%rd1];
    txq.normalized_coords.b32 %r6, [%rd1];
    txq.filter_mode.b32 %r7, [%rd1];
    txq.addr_mode_0.b32 %r8, [%rd1];
    txq.addr_mode_1.b32 %r9, [%rd1];
    txq.num_mipmap_levels.b32 %r10, [%rd1];
    txq.array_size.b32 %r11, [%rd1];
    mov.u32 %r20, 2;
    txq.level.width.b32 %r12, [%rd1], %r20;
    suq.width.b32 %r13, [%rd2];
    suq.height.b32 %r14, [%rd2];
    suq.channel_data_type.b32 %r15, [%rd2];
    suq.channel_order.b32 %r16, [%rd2];
    suq.memory_layout.b32 %r17, [%rd2];
    istypep.texref %p1, %rd1;
    istypep.surfref %p2, %rd1;
    istypep.surfref %p3, %rd2;
    istypep.texref %p4, %rd3;
    selp.u32 %r18, 1, 0, %p1;
    selp.u32 %r19, 2, 0, %p2;
    add.u32 %r18, %r18, %r19;
    selp.u32 %r19, 4, 0, %p3;
    add.u32 %r18, %r18, %r19;
    selp.u32 %r19, 8, 0, %p4;
    add.u32 %r18, %r18, %r19;
    st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%rd3+16], {%r5, %r6, %r7, %r8};
    st.global.v4.u32 [%rd3+32], {%r9, %r10, %r11, %r12};
    st.global.v4.u32 [%rd3+48], {%r13, %r14, %r15, %r16};
    st.global.v2.u32 [%rd3+64], {%r17, %r18};
    ret;
}

.visible .entry cube(.param .u64 tex, .param .u64 dirs, .param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<4>;
    .reg .f32 %f<12>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [dirs];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 16;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5];
    cvt.rzi.s32.f32 %r2, %f4;
    tex.acube.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%r2, %f1, %f2, %f3}];
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.f32 [%rd7], %f5;
    ret;
}

.visible .entry grad(.param .u64 tex, .param .f32 d, .param .u64 out)
{
    .reg .b64 %rd<3>;
    .reg .f32 %f<10>;
    ld.param.u64 %rd1, [tex];
    ld.param.f32 %f1, [d];
    ld.param.u64 %rd2, [out];
    mov.f32 %f2, 0f00000000;
    mov.f32 %f3, 0f3E800000;
    tex.grad.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f3, %f3}], {%f1, %f2}, {%f2, %f1};
    st.global.f32 [%rd2], %f4;
    ret;
}

.visible .entry layered1d(.param .u64 tex, .param .u64 out)
{
    .reg .b64 %rd<5>;
    .reg .b32 %r<4>;
    .reg .f32 %f<8>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    cvt.rn.f32.u32 %f1, %r1;
    add.f32 %f1, %f1, 0f3F000000;
    tex.a1d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%r2, %f1}];
    mad.lo.u32 %r3, %r2, 4, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f2;
    ret;
}

.visible .entry gather_layer(.param .u64 tex, .param .u64 out)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    .reg .f32 %f<8>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, 1;
    mov.f32 %f1, 0f3FC00000;
    tld4.g.a2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%r1, %f1, %f1, %f1}];
    st.global.v4.f32 [%rd2], {%f2, %f3, %f4, %f5};
    ret;
}

.visible .entry formatted(.param .u64 surf, .param .u64 isurf)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    ld.param.u64 %rd1, [surf];
    ld.param.u64 %rd2, [isurf];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    mov.b32 %r2, %f1;
    mov.u32 %r3, 0;
    sust.p.2d.v4.b32.trap [%rd1, {%r1, %r3}], {%r2, %r2, %r2, %r2};
    add.u32 %r4, %r1, 300;
    sust.p.1d.b32.trap [%rd2, {%r1}], %r4;
    ret;
}

.visible .entry reduce(.param .u64 surf)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<6>;
    ld.param.u64 %rd1, [surf];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    shl.b32 %r3, %r2, 2;
    add.u32 %r4, %r1, 1;
    sured.b.add.1d.u32.trap [%rd1, {%r3}], %r4;
    ret;
}
"""


@pytest.fixture(scope="module")
def k():
    err, m = mc.mcModuleLoadData(PTX)
    assert err == S, mc.last_error_message()
    return {n: mc.mcModuleGetFunction(m, n)[1] for n in ("queries", "cube", "grad", "layered1d", "formatted",
                                                         "reduce", "gather_layer")}


def desc(bits, kind, n=1):
    return mc.mcChannelFormatDesc(*([bits] * n + [0] * (4 - n)), kind)


def resource(arr):
    rd = mc.mcResourceDesc()
    if isinstance(arr, mc.mcResourceDesc):
        return arr
    rd.res.array.array = arr
    return rd


def texobj(rd, **fields):
    td = mc.mcTextureDesc()
    for k_, v in fields.items():
        setattr(td, k_, v)
    err, t = mc.mcCreateTextureObject(rd, td, None)
    assert err == S, mc.last_error_message()
    return t


def surfobj(arr):
    err, s = mc.mcCreateSurfaceObject(resource(arr))
    assert err == S, mc.last_error_message()
    return s


def run(f, grid, block, args):
    assert mc.mcLaunchKernel(f, grid, block, args) == (S,), mc.last_error_message()
    assert mc.mcDeviceSynchronize() == (S,), mc.last_error_message()


def fetch(ptr, like):
    out = np.zeros_like(like)
    assert mc.mcMemcpy(out, ptr, out.nbytes, D2H) == (S,)
    return out


def test_queries_and_istypep(k):
    err, mip = mc.mcMallocMipmappedArray(desc(32, FLOAT), mc.mcExtent(20, 12, 0), 4, 0)
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypeMipmappedArray)
    rd.res.mipmap.mipmap = mip
    tex = texobj(rd, addressMode=[0, 2, 1], filterMode=1, normalizedCoords=1)
    err, sarr = mc.mcMallocArray(desc(8, UNSIGNED, 4), 9, 7, mc.mcArrayFlags.mcArraySurfaceLoadStore)
    surf = surfobj(sarr)
    _, out = mc.mcMalloc(72)
    run(k["queries"], 1, 1, [tex, surf, out])
    got = fetch(out, np.zeros(18, np.uint32)).tolist()
    CL_FLOAT, CL_R, CL_UNSIGNED_INT8, CL_RGBA = 0x10DE, 0x10B0, 0x10DA, 0x10B5
    assert got[:12] == [20, 12, 1, CL_FLOAT, CL_R, 1, 1, 0, 2, 4, 0, 5]
    assert got[12:17] == [9, 7, CL_UNSIGNED_INT8, CL_RGBA, 0]
    assert got[17] == 1 | 4          # tex is a texref, surf a surfref; nothing else matches


def test_cubemap_layered_faces(k):
    n = 4
    faces = np.zeros((2 * 6, n, n), np.float32)
    for s in range(12):
        faces[s] = 10 * (s // 6) + s % 6          # layer*10 + face
    err, arr = mc.mcMalloc3DArray(desc(32, FLOAT), mc.mcExtent(n, n, 12),
                                  mc.mcArrayFlags.mcArrayCubemap | mc.mcArrayFlags.mcArrayLayered)
    assert err == S, mc.last_error_message()
    p = mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(faces, n * 4, n, n), dstArray=arr, extent=mc.mcExtent(n, n, 12),
                           kind=H2D)
    assert mc.mcMemcpy3D(p) == (S,), mc.last_error_message()
    tex = texobj(resource(arr), normalizedCoords=1)
    dirs = np.array([[1, 0.2, 0.1, 0], [-1, 0.3, 0, 1], [0.1, 2, 0, 0], [0, -3, 0.5, 1], [0, 0.2, 1, 1],
                     [0.4, 0, -1, 0]], np.float32)
    _, d = mc.mcMalloc(dirs.nbytes)
    mc.mcMemcpy(d, dirs, dirs.nbytes, H2D)
    _, out = mc.mcMalloc(24)
    run(k["cube"], 1, 6, [tex, d, out])
    assert fetch(out, np.zeros(6, np.float32)).tolist() == [0, 11, 2, 13, 14, 5]


def test_grad_selects_the_level_of_detail(k):
    err, mip = mc.mcMallocMipmappedArray(desc(32, FLOAT), mc.mcExtent(16, 16, 0), 5, 0)
    for lv in range(5):
        _, a = mc.mcGetMipmappedArrayLevel(mip, lv)
        size = 16 >> lv
        mc.mcMemcpy2DToArray(a, 0, 0, np.full((size, size), lv, np.float32), size * 4, size * 4, size, H2D)
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypeMipmappedArray)
    rd.res.mipmap.mipmap = mip
    tex = texobj(rd, normalizedCoords=1, maxMipmapLevelClamp=4.0)
    _, out = mc.mcMalloc(4)
    # a derivative of d in normalized coordinates covers 16*d base texels: lod = log2(16 d)
    for d, level in ((1 / 16, 0), (2 / 16, 1), (4 / 16, 2), (3.5 / 16, 2), (1.0, 4)):
        run(k["grad"], 1, 1, [tex, np.float32(d), out])
        assert fetch(out, np.zeros(1, np.float32))[0] == level, d


def test_layered_1d(k):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    err, arr = mc.mcMalloc3DArray(desc(32, FLOAT), mc.mcExtent(4, 0, 3), mc.mcArrayFlags.mcArrayLayered)
    assert err == S, mc.last_error_message()
    assert mc.mcMemcpyToArray(arr, 0, 0, data, data.nbytes, H2D) == (S,), mc.last_error_message()
    tex = texobj(resource(arr))
    _, out = mc.mcMalloc(48)
    run(k["layered1d"], 3, 4, [tex, out])
    np.testing.assert_array_equal(fetch(out, data), data)


def test_gather_of_one_component_from_a_layer(k):
    data = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2)     # layers, h, w, (r, g)
    err, arr = mc.mcMalloc3DArray(desc(32, FLOAT, 2), mc.mcExtent(3, 3, 2), mc.mcArrayFlags.mcArrayLayered)
    assert err == S, mc.last_error_message()
    p = mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(data, 24, 3, 3), dstArray=arr, extent=mc.mcExtent(3, 3, 2),
                           kind=H2D)
    assert mc.mcMemcpy3D(p) == (S,), mc.last_error_message()
    tex = texobj(resource(arr))
    _, out = mc.mcMalloc(16)
    run(k["gather_layer"], 1, 1, [tex, out])
    g = data[1, :, :, 1]        # layer 1, green; (1.5, 1.5): footprint i0 = j0 = 1
    assert fetch(out, np.zeros(4, np.float32)).tolist() == [g[2, 1], g[2, 2], g[1, 2], g[1, 1]]


def test_formatted_and_reducing_surface_stores(k):
    err, farr = mc.mcMallocArray(desc(32, FLOAT, 4), 8, 1, mc.mcArrayFlags.mcArraySurfaceLoadStore)
    err, iarr = mc.mcMallocArray(desc(16, mc.mcChannelFormatKind.mcChannelFormatKindSigned), 8, 0,
                                 mc.mcArrayFlags.mcArraySurfaceLoadStore)
    run(k["formatted"], 1, 8, [surfobj(farr), surfobj(iarr)])
    f = np.zeros((8, 4), np.float32)
    assert mc.mcMemcpyFromArray(f, farr, 0, 0, f.nbytes, D2H) == (S,)
    np.testing.assert_array_equal(f, np.repeat(np.arange(8, dtype=np.float32)[:, None], 4, axis=1))
    i = np.zeros(8, np.int16)
    assert mc.mcMemcpyFromArray(i, iarr, 0, 0, i.nbytes, D2H) == (S,)
    np.testing.assert_array_equal(i, np.arange(300, 308))
    err, rarr = mc.mcMallocArray(desc(32, UNSIGNED), 4, 0, mc.mcArrayFlags.mcArraySurfaceLoadStore)
    mc.mcMemcpyToArray(rarr, 0, 0, np.full(4, 1000, np.uint32), 16, H2D)
    run(k["reduce"], 1, 64, [surfobj(rarr)])
    r = np.zeros(4, np.uint32)
    mc.mcMemcpyFromArray(r, rarr, 0, 0, 16, D2H)
    want = [1000 + sum(t + 1 for t in range(64) if t % 4 == c) for c in range(4)]
    np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("line, reason", [
    (".global .texref t;\n.visible .entry e() { .reg .f32 %f<6>; "
     "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [t, {%f5, %f5}]; ret; }", ".texref/.surfref variables"),
    (".visible .entry e(.param .u64 h) { .reg .f32 %f<6>; .reg .b64 %rd1; .reg .b32 %r<2>; ld.param.u64 %rd1, [h]; "
     "tex.2dms.v4.f32.s32 {%f1,%f2,%f3,%f4}, [%rd1, {%r1, %r1, %r1, %r1}]; ret; }", "multisample"),
    (".visible .entry e(.param .u64 h) { .reg .f32 %f<6>; .reg .b64 %rd1; ld.param.u64 %rd1, [h]; "
     "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd1, %rd1, {%f5, %f5}]; ret; }", "independent texture mode"),
])
def test_unsupported_forms_are_refused_at_load_with_the_reason(line, reason):
    assert mc.mcModuleLoadData(HEAD + line)[0] == E.mcErrorInvalidKernelFile
    assert reason in mc.last_error_message()
