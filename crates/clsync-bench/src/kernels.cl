// The six workloads in OpenCL C 2.0, for PoCL. The same algorithms as the
// clsync kernels (crates/clsync-bench/src/kernels.rs).

#define GROUP 256
#define TILE 16
#define HIST_PER_ITEM 256

kernel void barrier_loop(global uint* out, int barriers) {
    uint acc = (uint)get_local_id(0);
    for (int i = 0; i < barriers; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3u + 1u;
    }
    out[get_global_id(0)] = acc;
}

kernel void reduce(global const float* in, global float* partial, local float* s) {
    size_t l = get_local_id(0);
    size_t ahead = get_group_id(0) + 2;
    if (l == 0 && ahead < get_num_groups(0)) prefetch(in + ahead * GROUP, GROUP);
    s[l] = in[get_global_id(0)];
    for (size_t h = GROUP / 2; h > 0; h /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    if (l == 0) partial[get_group_id(0)] = s[0];
}

// Hillis-Steele of radix 4 over two local arrays: each step adds the three
// elements `step`, `2 * step` and `3 * step` back, and the stride grows
// fourfold, so 256 elements take 4 steps (and 4 barriers) instead of 8.
// Each array has PAD zeros before its GROUP elements, so that the first
// work-items of a step read zeros there: one branch-free statement per
// step instead of tests on `l`.
#define PAD (3 * GROUP / 4)
kernel void scan_groups(global int* data, global int* sums, local int* a, local int* b) {
    size_t l = get_local_id(0);
    size_t ahead = get_group_id(0) + 2;
    if (l == 0 && ahead < get_num_groups(0)) prefetch(data + ahead * GROUP, GROUP);
    if (l < PAD) { a[l] = 0; b[l] = 0; }
    local int* src = a + PAD;
    local int* dst = b + PAD;
    size_t g = get_global_id(0);
    ptrdiff_t i = (ptrdiff_t)l, s;
    // The first step (s = 1) straight from `data`: the element and those of
    // the three before it that are in the group. Another work-item's
    // element is read here and written by it in the last step; the global
    // fence of the barrier before that step orders the two.
    int v = data[g];
    if (l >= 1) v += data[g - 1];
    if (l >= 2) v += data[g - 2];
    if (l >= 3) v += data[g - 3];
    dst[l] = v;
    { local int* t = src; src = dst; dst = t; }
    // The steps between the first and the last, between the local arrays...
    for (s = 4; s < GROUP / 4; s *= 4) {
        barrier(CLK_LOCAL_MEM_FENCE);
        dst[l] = src[i] + src[i - s] + src[i - 2 * s] + src[i - 3 * s];
        local int* t = src; src = dst; dst = t;
    }
    // ...and the last (s = GROUP / 4) straight into `data`, as the clsync
    // kernel does: each work-item writes its own element, no barrier after.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    v = src[i] + src[i - s] + src[i - 2 * s] + src[i - 3 * s];
    data[g] = v;
    if (l == GROUP - 1) sums[get_group_id(0)] = v;
}

kernel void scan_add(global int* data, global const int* offsets) {
    data[get_global_id(0)] += offsets[get_group_id(0)];
}

kernel void sgemm(global const float* a, global const float* b, global float* c, int n) {
    local float ta[TILE * TILE];
    local float tb[TILE * TILE];
    size_t tx = get_local_id(0), ty = get_local_id(1);
    size_t col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        ta[ty * TILE + tx] = a[row * n + t * TILE + tx];
        tb[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++) acc += ta[ty * TILE + k] * tb[k * TILE + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

kernel void histogram(global const uchar* in, global atomic_uint* bins) {
    local atomic_uint lb[256];
    size_t l = get_local_id(0);
    atomic_store_explicit(&lb[l], 0u, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t base = get_global_id(0) * HIST_PER_ITEM;
    // Four bytes per step, as the clsync kernel.
    for (int k = 0; k < HIST_PER_ITEM; k += 4)
        for (int j = 0; j < 4; j++)
            atomic_fetch_add_explicit(&lb[in[base + k + j]], 1u, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = atomic_load_explicit(&lb[l], memory_order_relaxed, memory_scope_work_group);
    if (v != 0) atomic_fetch_add_explicit(&bins[l], v, memory_order_relaxed, memory_scope_device);
}

// turn, then the two messages, in one buffer: one cache line, as in the
// clsync kernel and the limit.
kernel void ping_pong(global atomic_uint* s, int rounds) {
    uint me = (uint)get_group_id(0);
    global atomic_uint* turn = &s[0];
    for (uint r = 0; r < (uint)rounds; r++) {
        uint mine = 2 * r + me;
        while (atomic_load_explicit(turn, memory_order_acquire, memory_scope_device) != mine) {}
        uint got = (r == 0 && me == 0)
            ? 0u
            : atomic_load_explicit(&s[2 - me], memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(&s[1 + me], got + 1, memory_order_relaxed, memory_scope_device);
        atomic_store_explicit(turn, mine + 1, memory_order_release, memory_scope_device);
    }
}
