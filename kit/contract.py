"""The fixed names of ../shared/CONTRACT.md, in one place: answer grade_id -> notebook."""

CONTRACT = {
    "counter": "01_sync_primitives",
    "semaphore_pool": "01_sync_primitives",
    "vec_add": "02_cuda_kernels",
    "histogram": "02_cuda_kernels",
    "dot_reduction": "02_cuda_kernels",
    "all_reduce": "03_collectives",
    "word_count": "04_mapreduce",
    "fsdp_checkpoint": "05_fsdp_checkpoint",
    "quiz": "06_quiz",
    "pipeline": "07_parallelism",
    "tensor_parallel": "07_parallelism",
    "zero1": "07_parallelism",
}
NOTEBOOKS = sorted(set(CONTRACT.values()))
