GK=.gpu-carry/gauntlet-kernels
for sm in "mma 129x300x208" "mma 257x513x1040" "mma 1x300x64"; do set -- $sm; timeout 20 $GK gemm --backend mma --shape $2 --iters 2 | cut -c1-120; echo "smoke $sm $?"; done
pre=$($GK preflight --iters 10 | python3 -c 'import json,sys; p=json.load(sys.stdin)["perf"]; print(p["copy_gbps"], p["bf16_tflops"])'); echo "ceilings $pre"
for impl in v3 v3n256 v2 v3; do echo -n "$impl "; GK_WGMMA_IMPL=$impl timeout 60 $GK gemm --backend mma --shape 8192x8192x8192 --iters 20 | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], r["tflops"], r["ms_p50"])'; done
echo -n "dq "; timeout 60 $GK gemm --backend dequant_cublas --shape 8192x8192x8192 --iters 20 | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], r["tflops"])'
echo -n "v3 2048 "; timeout 60 $GK gemm --backend mma --shape 2048x8192x8192 --iters 20 | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], r["tflops"])'
