"""Thread-block clusters (sm_90): which blocks form a cluster, where the
device places them, and how distributed shared memory is addressed.

The one idea: a launch with clusters numbers its blocks in *cluster order*
(cluster after cluster, each cluster's blocks by rank, x fastest), so the
executor's waves, which are ranges of that number, always hold whole
clusters, and the blocks of a cluster are neighbours in a wave: a block's
cluster peers are the resident blocks `index - rank .. index - rank +
size - 1`. Without clusters the order is the plain linear block order.
A cluster runs in one GPC, as hardware places it: the device model splits
its SMs into GPCs (GPC_COUNT, as on H100), and a wave deals whole clusters
to GPCs round-robin, each cluster's blocks to that GPC's SMs.

A `.shared::cluster` address is the owning block's shared offset with
`rank + 1` in the bits above RANK_SHIFT (mapa makes one); an address with
no rank bits is the block's own shared memory, so every `.shared::cta`
address is also a valid `.shared::cluster` address, as the PTX ISA
requires. Generic addresses into the shared window carry the same bits.

It does not model non-portable cluster sizes above PORTABLE_CLUSTER_SIZE
(the attribute that allows them is never set), nor cluster placement
policies (spread/load-balancing): every cluster goes to the next GPC. When
other grids hold SMs at the same time (sim/sm_pool.py), a cluster launch
takes whole clusters of the blocks the pool places but keeps the pool's
SMs, which need not share a GPC.
"""
from __future__ import annotations

import numpy as np

PORTABLE_CLUSTER_SIZE = 8
CLUSTER_BARRIER = -3          # bar_wait of threads parked at barrier.cluster.wait
GPC_COUNT = 8                 # graphics processing clusters of an H100
RANK_SHIFT = 24               # shared offsets are below 16 MiB; ranks live above
OFFSET_MASK = (1 << RANK_SHIFT) - 1

Dim3 = tuple[int, int, int]


def size(cluster: Dim3) -> int:
    return cluster[0] * cluster[1] * cluster[2]


def gpc_sms(sm_count: int) -> list[np.ndarray]:
    """The SMs of each GPC: consecutive SM ids, as evenly as the count allows."""
    bounds = np.linspace(0, sm_count, GPC_COUNT + 1).round().astype(int)
    return [np.arange(bounds[g], bounds[g + 1]) for g in range(GPC_COUNT) if bounds[g + 1] > bounds[g]]


def clusters_per_wave(sm_count: int, blocks_per_sm: int, cluster: Dim3) -> int:
    """Clusters the device holds at once: each GPC takes as many whole
    clusters as its SMs have block slots for."""
    n = size(cluster)
    return sum((len(sms) * blocks_per_sm) // n for sms in gpc_sms(sm_count))


def block_coords(order: np.ndarray, grid: Dim3, cluster: Dim3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """blockIdx (x, y, z) of launch-order block numbers (module docstring)."""
    order = np.asarray(order, dtype=np.int64)
    gx, gy = int(grid[0]), int(grid[1])
    if size(cluster) == 1:
        return order % gx, (order // gx) % gy, order // (gx * gy)
    cx, cy, cz = cluster
    ncx, ncy = gx // cx, gy // cy
    c, rank = order // size(cluster), order % size(cluster)
    return ((c % ncx) * cx + rank % cx, ((c // ncx) % ncy) * cy + (rank // cx) % cy,
            (c // (ncx * ncy)) * cz + rank // (cx * cy))


def block_sm(nblocks: int, sm_count: int, cluster: Dim3) -> np.ndarray:
    """The SM of each resident block of a full wave: clusters dealt to GPCs
    round-robin, a cluster's blocks to its GPC's SMs, each GPC's SMs
    filled round-robin as blocks arrive."""
    n = size(cluster)
    gpcs = gpc_sms(sm_count)
    nxt = [0] * len(gpcs)
    out = np.empty(nblocks, dtype=np.uint32)
    for c in range(-(-nblocks // n)):
        g = c % len(gpcs)
        sms = gpcs[g]
        for r in range(min(n, nblocks - c * n)):
            out[c * n + r] = sms[nxt[g] % len(sms)]
            nxt[g] += 1
    return out


def check(grid: Dim3, cluster: Dim3) -> str | None:
    """Why `cluster` cannot shape a launch of `grid`, or None."""
    if any(int(c) < 1 for c in cluster):
        return f"cluster dimension {tuple(cluster)} has a zero or negative extent"
    if any(int(g) % int(c) for g, c in zip(grid, cluster)):
        return f"cluster dimension {tuple(cluster)} does not divide the grid {tuple(grid)}"
    if size(cluster) > PORTABLE_CLUSTER_SIZE:
        return (f"cluster dimension {tuple(cluster)} has {size(cluster)} blocks, more than the portable "
                f"cluster size {PORTABLE_CLUSTER_SIZE}")
    return None


# ------------------------------------------------------------------ addresses
def ranks_of(resident: np.ndarray, wave_start: int, cluster: Dim3) -> np.ndarray:
    """The cluster rank (%cluster_ctarank) of resident blocks."""
    return ((np.asarray(resident, dtype=np.int64) + int(wave_start)) % size(cluster)).astype(np.int64)


def lane_ranks(X, idx) -> np.ndarray:
    """%cluster_ctarank of the threads `idx` (None: all) of wave X."""
    blocks = X.layout.block_of if idx is None else X.layout.block_of[idx]
    start = X.wave_blocks[0] if len(X.wave_blocks) else 0
    return ranks_of(blocks, start, X.cluster_dim)


def rank_coords(ranks: np.ndarray, cluster: Dim3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """%cluster_ctaid (x, y, z) of cluster ranks (x fastest)."""
    r = np.asarray(ranks, dtype=np.int64)
    cx, cy = int(cluster[0]), int(cluster[1])
    return r % cx, (r // cx) % cy, r // (cx * cy)


def split(offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(target rank + 1, 0 for the own block) and the shared offset."""
    o = np.asarray(offsets).astype(np.uint64)
    return (o >> np.uint64(RANK_SHIFT)).astype(np.int64), (o & np.uint64(OFFSET_MASK))


def join(ranks: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The `.shared::cluster` address of `offsets` in the blocks of `ranks`."""
    return ((np.asarray(ranks, dtype=np.uint64) + np.uint64(1)) << np.uint64(RANK_SHIFT)) | (
        np.asarray(offsets).astype(np.uint64) & np.uint64(OFFSET_MASK))
