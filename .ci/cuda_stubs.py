"""Link stubs of the CUDA libraries candle links (driver, NVRTC, cuRAND, cuBLAS, cuBLASLt), so
the `cuda` build links on a machine without a GPU or a CUDA toolkit, as a toolkit's lib64/stubs
lets it. Each stub has the real library's soname and one empty function per function that
cudarc's bindings declare; at run time the loader takes the real libraries (the driver's, and
PyTorch's or a toolkit's) by those sonames, and the stubs are never loaded.
Usage: cuda_stubs.py CUDARC_SRC OUT_DIR   (CUDARC_SRC: cudarc's src/ folder)"""

import os
import re
import subprocess
import sys
import tempfile

# cudarc's bindings folder, the library it links (`-l` name) and that library's soname in
# CUDA 13 (the sonames of the NVIDIA wheels nvidia-cublas, nvidia-curand and
# nvidia-cuda-nvrtc 13.0, and the driver's libcuda.so.1).
LIBRARIES = [
    ("driver", "cuda", "libcuda.so.1"),
    ("nvrtc", "nvrtc", "libnvrtc.so.13"),
    ("curand", "curand", "libcurand.so.10"),
    ("cublas", "cublas", "libcublas.so.13"),
    ("cublaslt", "cublasLt", "libcublasLt.so.13"),
]
FUNCTION = re.compile(r"^pub unsafe fn (\w+)\(", re.M)


def stub(bindings, name, soname, out):
    with open(bindings) as f:
        names = sorted(set(FUNCTION.findall(f.read())))
    if not names:
        sys.exit(f"no functions found in {bindings}: cudarc's bindings have changed")
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as c:
        c.write("".join(f"void {n}(void) {{}}\n" for n in names))
    lib = os.path.join(out, f"lib{name}.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, c.name, f"-Wl,-soname,{soname}"], check=True)
    os.unlink(c.name)
    print(f"{lib}: {len(names)} functions, soname {soname}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for folder, name, soname in LIBRARIES:
        stub(os.path.join(src, folder, "sys", "mod.rs"), name, soname, out)


if __name__ == "__main__":
    main()
