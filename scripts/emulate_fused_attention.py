#!/usr/bin/env python3
# A desk check of labs/attention/fused_mma.cuh without a GPU: its index math (which rows and
# columns each lane hands ldmatrix, how score accumulators become P's A fragments, the masks and
# the online softmax), replayed in Python for one block with ldmatrix and mma.sync as labs/gemm's
# Note [m16n8k16 fragments] describes them (validated on the H100 by labs/gemm), against an
# fp64 attention row, under half the lab's atol (2e-3 + rtol 1e-2; the lab allows 4e-3). It does not model the
# cp.async pipeline, barriers or timing, and it is a copy of the kernel's logic: change both
# together. Run: python3 scripts/emulate_fused_attention.py (pure Python, ~2 s). 2026-11-27: the
# five cases below pass, worst error at 0.5 of the tolerance.
import math, random, struct, sys

def bf16(x):
    b = struct.unpack('<I', struct.pack('<f', x))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return struct.unpack('<f', struct.pack('<I', b))[0]

def ldmatrix_x4(smem, stride, row_col_of_lane, trans=False):
    # row_col_of_lane(l) -> (row, col) of the 8-element row that lane l addresses (matrix l//8, row l%8)
    mats = []
    for j in range(4):
        rows = []
        for r in range(8):
            rr, cc = row_col_of_lane(8 * j + r)
            rows.append([smem[rr][cc + i] for i in range(8)])
        mats.append(rows)
    regs = []
    for l in range(32):
        g, t = l // 4, l % 4
        lane_regs = []
        for j in range(4):
            m = mats[j]
            if not trans:
                lane_regs.append((m[g][2 * t], m[g][2 * t + 1]))
            else:
                lane_regs.append((m[2 * t][g], m[2 * t + 1][g]))
        regs.append(lane_regs)
    return regs  # regs[lane][j] = (low, high)

def mma(d, a, b):
    # d[lane] = [d0..d3]; a[lane] = 4 pairs; b[lane] = 2 pairs
    A = [[0.0] * 16 for _ in range(16)]
    B = [[0.0] * 8 for _ in range(16)]
    for l in range(32):
        g, t = l // 4, l % 4
        A[g][2 * t], A[g][2 * t + 1] = a[l][0]
        A[g + 8][2 * t], A[g + 8][2 * t + 1] = a[l][1]
        A[g][2 * t + 8], A[g][2 * t + 9] = a[l][2]
        A[g + 8][2 * t + 8], A[g + 8][2 * t + 9] = a[l][3]
        B[2 * t][g], B[2 * t + 1][g] = b[l][0]
        B[2 * t + 8][g], B[2 * t + 9][g] = b[l][1]
    for l in range(32):
        g, t = l // 4, l % 4
        for e in range(4):
            row = g + 8 * (e // 2)
            col = 2 * t + (e % 2)
            d[l][e] += sum(A[row][k] * B[k][col] for k in range(16))

def run_block(Q, K, V, seq, Dim, q0, causal, scale, window=0, skip=True):
    stride = Dim + 8
    block_q, block_kv = 64, 64
    def load(mat, first, rows):
        sm = [[0.0] * stride for _ in range(rows)]
        for r in range(rows):
            if first + r < seq:
                for c in range(Dim):
                    sm[r][c] = mat[first + r][c]
        return sm
    q_tile = load(Q, q0, block_q)
    kv_end = min(seq, q0 + block_q) if causal else seq
    kv_tiles = (kv_end + block_kv - 1) // block_kv
    first_tile = max(0, q0 - window + 1) // block_kv if window > 0 and skip else 0
    out_rows = {}
    scale_log2 = scale * 1.4426950408889634
    for warp in range(4):
        qf = [ldmatrix_x4(q_tile, stride, lambda l, kk=kk: (warp * 16 + (l & 15), kk * 16 + (l >> 4) * 8)) for kk in range(Dim // 16)]
        out = [[[0.0] * 4 for _ in range(32)] for _ in range(Dim // 8)]
        row_max = [[-math.inf] * 2 for _ in range(32)]
        row_sum = [[0.0] * 2 for _ in range(32)]
        for tile in range(first_tile, kv_tiles):
            kv0 = tile * block_kv
            k_tile = load(K, kv0, block_kv)
            v_tile = load(V, kv0, block_kv)
            scores = [[[0.0] * 4 for _ in range(32)] for _ in range(block_kv // 8)]
            for kk in range(Dim // 16):
                for pair in range(block_kv // 16):
                    b = ldmatrix_x4(k_tile, stride, lambda l, pair=pair, kk=kk: (pair * 16 + ((l & 7) | ((l >> 4) << 3)), kk * 16 + ((l >> 3) & 1) * 8))
                    mma(scores[2 * pair], qf[kk], [(b[l][0], b[l][1]) for l in range(32)])
                    mma(scores[2 * pair + 1], qf[kk], [(b[l][2], b[l][3]) for l in range(32)])
            warp_q0 = q0 + warp * 16
            needs_mask = kv0 + block_kv > seq or (causal and kv0 + block_kv - 1 > warp_q0) or (window > 0 and kv0 <= warp_q0 + 15 - window)
            for half in range(2):
                tile_max = [0.0] * 32
                for l in range(32):
                    g, t = l // 4, l % 4
                    query = q0 + warp * 16 + g + 8 * half
                    m = -math.inf
                    for n in range(block_kv // 8):
                        for e in range(2):
                            key = kv0 + n * 8 + 2 * t + e
                            s = scores[n][l][2 * half + e]
                            masked = key >= seq or (causal and key > query) or (window > 0 and key <= query - window)
                            s = -math.inf if (needs_mask and masked) else s * scale_log2
                            scores[n][l][2 * half + e] = s
                            m = max(m, s)
                    tile_max[l] = m
                for l in range(32):  # quad reduction (xor 1, xor 2)
                    quad = [tile_max[(l & ~3) | i] for i in range(4)]
                    tm = max(quad)
                    new_max = max(row_max[l][half], tm)
                    subtract = 0.0 if new_max == -math.inf else new_max
                    rescale = 2.0 ** (row_max[l][half] - subtract) if row_max[l][half] != -math.inf else 0.0
                    row_max[l][half] = new_max
                    ssum = 0.0
                    for n in range(block_kv // 8):
                        for e in range(2):
                            s = scores[n][l][2 * half + e]
                            s = 0.0 if s == -math.inf else 2.0 ** (s - subtract)
                            scores[n][l][2 * half + e] = s
                            ssum += s
                    row_sum[l][half] = row_sum[l][half] * rescale + ssum
                    for n in range(Dim // 8):
                        out[n][l][2 * half] *= rescale
                        out[n][l][2 * half + 1] *= rescale
            for c in range(block_kv // 16):
                a = [((bf16(scores[2 * c][l][0]), bf16(scores[2 * c][l][1])), (bf16(scores[2 * c][l][2]), bf16(scores[2 * c][l][3])),
                      (bf16(scores[2 * c + 1][l][0]), bf16(scores[2 * c + 1][l][1])), (bf16(scores[2 * c + 1][l][2]), bf16(scores[2 * c + 1][l][3])))
                     for l in range(32)]
                for pair in range(Dim // 16):
                    b = ldmatrix_x4(v_tile, stride, lambda l, c=c, pair=pair: (c * 16 + ((l >> 3) & 1) * 8 + (l & 7), pair * 16 + ((l >> 3) >> 1) * 8), trans=True)
                    mma(out[2 * pair], a, [(b[l][0], b[l][1]) for l in range(32)])
                    mma(out[2 * pair + 1], a, [(b[l][2], b[l][3]) for l in range(32)])
        for half in range(2):
            for l in range(32):
                g, t = l // 4, l % 4
                total = sum(row_sum[(l & ~3) | i][half] for i in range(4))
                inv = 1.0 / total if total > 0 else 0.0
                query = q0 + warp * 16 + g + 8 * half
                if query >= seq:
                    continue
                row = out_rows.setdefault(query, [None] * Dim)
                for n in range(Dim // 8):
                    row[n * 8 + 2 * t] = bf16(out[n][l][2 * half] * inv)
                    row[n * 8 + 2 * t + 1] = bf16(out[n][l][2 * half + 1] * inv)
    return out_rows

def reference(Q, K, V, seq, Dim, causal, scale, i, window=0):
    first = max(0, i - window + 1) if window > 0 else 0
    keys = range(first, i + 1 if causal else seq)
    w = {j: sum(Q[i][c] * K[j][c] for c in range(Dim)) * scale for j in keys}
    m = max(w.values())
    e = {j: math.exp(x - m) for j, x in w.items()}
    tot = sum(e.values())
    return [sum(e[j] / tot * V[j][c] for j in keys) for c in range(Dim)]

def check(seq, Dim, causal, q0, window=0, skip=True):
    random.seed(seq * 7 + Dim + causal)
    R = lambda: [[bf16(random.uniform(-1, 1)) for _ in range(Dim)] for _ in range(seq)]
    Q, K, V = R(), R(), R()
    scale = 1.0 / math.sqrt(Dim)
    rows = run_block(Q, K, V, seq, Dim, q0, causal, scale, window, skip)
    worst = 0.0
    for i, row in rows.items():
        assert None not in row, f"row {i} not fully written"
        ref = reference(Q, K, V, seq, Dim, causal, scale, i, window)
        for c in range(Dim):
            err = abs(row[c] - ref[c]) - (2e-3 + 1e-2 * abs(ref[c]))
            worst = max(worst, abs(row[c] - ref[c]))
            assert err <= 0, f"seq {seq} D {Dim} causal {causal} row {i} col {c}: {row[c]} vs {ref[c]}"
    expected = [i for i in range(q0, min(seq, q0 + 64))]
    assert sorted(rows) == expected, (sorted(rows)[:5], expected[:5])
    print(f"seq {seq:4d} D {Dim:3d} causal {causal} q0 {q0:3d} window {window:3d} skip {skip}: {len(rows)} rows ok, "
          f"worst abs error {worst:.2e}")

for args in [(7, 64, False, 0), (65, 64, False, 0), (130, 64, True, 64), (130, 64, False, 128), (70, 128, True, 0),
             (200, 64, True, 128, 70, True), (200, 64, True, 128, 70, False), (150, 64, True, 64, 1, True),
             (150, 64, True, 128, 17, True)]:
    check(*args)
