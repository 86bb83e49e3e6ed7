"""pyopencl on clsync's platform: its README's demo (a vector sum), then
its array library's reductions and scan, each checked with numpy."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.scan import InclusiveScanKernel

platform = [p for p in cl.get_platforms() if p.name == "clsync"][0]
ctx = cl.Context(platform.get_devices())
queue = cl.CommandQueue(ctx)

a_np = np.random.rand(50000).astype(np.float32)
b_np = np.random.rand(50000).astype(np.float32)
mf = cl.mem_flags
a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_np)
b_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_np)
prg = cl.Program(ctx, """
__kernel void sum(__global const float *a_g, __global const float *b_g, __global float *res_g)
{
  int gid = get_global_id(0);
  res_g[gid] = a_g[gid] + b_g[gid];
}
""").build()
res_g = cl.Buffer(ctx, mf.WRITE_ONLY, a_np.nbytes)
prg.sum(queue, a_np.shape, None, a_g, b_g, res_g)
res_np = np.empty_like(a_np)
cl.enqueue_copy(queue, res_np, res_g)
assert np.array_equal(res_np, a_np + b_np)
print("vector sum: ok")

x = cla.to_device(queue, np.arange(100000, dtype=np.float32))
assert abs(cla.sum(x).get() - 4999950000.0) / 4999950000.0 < 1e-6
assert abs(cla.dot(x, x).get() - 3.33328333335e14) / 3.33328333335e14 < 1e-5
print("sum, dot: ok")

n = np.arange(10000, dtype=np.int32) % 7
scan = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
assert (scan(cla.to_device(queue, n)).get() == np.cumsum(n)).all()
print("scan: ok")
