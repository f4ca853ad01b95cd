"""NPU6xx: the project around the Python code. Dependencies (requirements, constraints, pyproject.toml, setup.py,
setup.cfg), launch scripts (shell, Makefile, Dockerfile, notebook ``!`` lines) and configs (YAML, JSON).

These rules have their own IDs even where a Python rule does the same thing in ``.py`` files (NPU610 is the
shell twin of NPU111, NPU615 of NPU103): ``--select NPU6`` then ports exactly the files around the code, and a rule's
golden cases stay in one file type.
"""

from __future__ import annotations

from ascend_port.rules import Confidence, rule

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# --- dependencies ---------------------------------------------------------------------------------------------

CUDA_ONLY_DEPENDENCY = rule(
    "NPU600", "cuda-only-dependency", HIGH,
    "CUDA-only packages (flash-attn, xformers, nvidia-*, cupy-cuda*, pynvml) are commented out, saying why.",
    """
    These packages have no Ascend build: installing them fails or pulls CUDA libraries that nothing on an NPU
    host can use. The line is commented out (never deleted) with the reason and the replacement, in
    requirements/constraints files, pyproject.toml (`[project]` dependencies, optional dependencies and
    `[dependency-groups]`), setup.py and setup.cfg (`install_requires`, `extras_require`). Where an item shares a
    line with others it is removed and the comment goes on its own line above the statement.

    Before:
        flash-attn==2.6.3
        pynvml>=11
    After:
        # flash-attn==2.6.3  # removed by ascend-port NPU600: CUDA-only; torch_npu.npu_fusion_attention replaces it
        # pynvml>=11  # removed by ascend-port NPU600: NVML bindings for NVIDIA drivers; query NPUs with npu-smi ...
    """,
)
TRITON_ASCEND_DEPENDENCY = rule(
    "NPU601", "triton-ascend-dependency", MEDIUM,
    "`triton` -> `triton-ascend`; its version is dropped (triton-ascend releases follow CANN, not Triton).",
    """
    Triton kernels run on Ascend through Triton-Ascend, a separate distribution that cannot coexist with
    community Triton (installing one overwrites the other). The version of `triton` says nothing about which
    triton-ascend release matches your CANN, so the pin is dropped and the old requirement is quoted in a comment:
    pick the release for your CANN and uninstall community triton first. Kernels themselves are NPU5xx's business.

    Before:
        triton==3.1.0
    After:
        triton-ascend  # ascend-port NPU601: was triton==3.1.0; pin the triton-ascend release for your CANN
    """,
)
TORCH_NPU_DEPENDENCY = rule(
    "NPU602", "torch-npu-dependency", HIGH,
    "Add `torch-npu` next to `torch`, pinned to the same release where torch is pinned (`torch==2.5.1` -> "
    "`torch-npu==2.5.1.*`).",
    """
    torch_npu X.Y.Z is built for torch X.Y.Z and nothing else (its wheel requires `torch==X.Y.Z.*`). Bug-fix
    releases of torch-npu are post releases of the same version (2.5.1.post1, 2.1.0.post17), so the pin is a
    prefix pin that accepts them. An unpinned torch gets an unpinned torch-npu: pip pairs them through torch-npu's
    own requirement. A torch pinned before 2.1 has no torch-npu on PyPI: reported, nothing added. Nothing is added
    where torch-npu is already listed, nor in hash-checking files (add it with its hashes when you re-lock).

    Before:
        torch==2.5.1
    After:
        torch==2.5.1
        torch-npu==2.5.1.*  # added by ascend-port NPU602: torch-npu 2.5.1 pairs with torch 2.5.1
    """,
)
CUDA_TORCH_BUILD = rule(
    "NPU603", "cuda-torch-build", LOW,
    "CUDA builds of torch (`+cu121` pins, download.pytorch.org CUDA indexes) in requirements files: TODO.",
    """
    torch_npu refuses a CUDA build of torch ("Two accelerators cannot be used at the same time"). On aarch64
    hosts the PyPI torch is the CPU build; on x86_64 use https://download.pytorch.org/whl/cpu. The line is kept.

    Before:
        --extra-index-url https://download.pytorch.org/whl/cu121
    After:
        # TODO(ascend-port): NPU603 [low] CUDA wheel index: torch_npu needs the CPU build of torch ...
        --extra-index-url https://download.pytorch.org/whl/cu121
    """,
)

# --- launch scripts: shell, Makefile recipes, Dockerfile RUN/ENV, notebook ! lines -------------------------------

SHELL_CUDA_ENV_VAR = rule(
    "NPU610", "shell-cuda-env-var", HIGH,
    "CUDA/NCCL runtime variables with an exact Ascend counterpart, set or read in shell code -> the Ascend name "
    "(`CUDA_VISIBLE_DEVICES` -> `ASCEND_RT_VISIBLE_DEVICES`, `TORCH_NCCL_*` -> `TORCH_HCCL_*`).",
    """
    In assignments (`NAME=value cmd`), `export`/`unset`/`declare`/`local`/`readonly`, `env NAME=value`, `$NAME` and
    `${NAME...}` expansions, Dockerfile `ENV`, Makefile variables and notebook `%env`. Comments, single-quoted
    strings, plain text in double quotes and heredoc bodies are never touched. The names are those of the Python
    rules NPU111 and NPU207 (one table), so a launch script and the code it starts agree: `CUDA_VISIBLE_DEVICES`,
    `CUDA_LAUNCH_BLOCKING`, `PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_NO_CUDA_MEMORY_CACHING`, the `TORCH_NCCL_*` watchdog
    settings torch_npu reads as `TORCH_HCCL_*`, and the legacy `NCCL_BLOCKING_WAIT`/`NCCL_ASYNC_ERROR_HANDLING`.

    Before:
        export CUDA_VISIBLE_DEVICES=0,1,2,3
    After:
        export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
    """,
)
SHELL_NCCL_ENV_VAR = rule(
    "NPU611", "shell-nccl-env-var", MEDIUM,
    "NCCL variables whose HCCL counterpart may read the value differently -> the HCCL name (with a TODO where the "
    "value needs converting).",
    """
    The table of NPU208: `NCCL_SOCKET_IFNAME` -> `HCCL_SOCKET_IFNAME`, `NCCL_SOCKET_FAMILY` -> `HCCL_SOCKET_FAMILY`,
    `NCCL_IB_TIMEOUT`/`_RETRY_CNT`/`_TC`/`_SL` -> `HCCL_RDMA_*`; `NCCL_BUFFSIZE` -> `HCCL_BUFFSIZE` (bytes -> MB) and
    `NCCL_ALGO` -> `HCCL_ALGO` (other syntax) also get a TODO where they are set. Same places as NPU610.

    Before:
        export NCCL_SOCKET_IFNAME=eth0
    After:
        export HCCL_SOCKET_IFNAME=eth0
    """,
)
SHELL_NCCL_NO_EQUIVALENT = rule(
    "NPU612", "shell-nccl-env-var-no-equivalent", LOW,
    "NCCL variables set in shell code with no HCCL equivalent (`NCCL_DEBUG`, `NCCL_IB_*`, `NCCL_P2P_*` ...): TODO.",
    """
    HCCL ignores NCCL settings. The TODO names the nearest Ascend setting where there is one (as NPU209 does in
    Python): `NCCL_DEBUG` -> CANN logging (`ASCEND_GLOBAL_LOG_LEVEL`, `ASCEND_SLOG_PRINT_TO_STDOUT`),
    `NCCL_P2P_DISABLE` -> `HCCL_INTRA_PCIE_ENABLE`/`HCCL_INTRA_ROCE_ENABLE`. The setting is kept.

    Before:
        export NCCL_DEBUG=INFO
    After:
        # TODO(ascend-port): NPU612 [low] NCCL_DEBUG has no HCCL equivalent and no effect on NPU; ...
        export NCCL_DEBUG=INFO
    """,
)
NVIDIA_SMI = rule(
    "NPU613", "nvidia-smi", HIGH,
    "`nvidia-smi` run without arguments -> `npu-smi info`.",
    """
    Both print the device table. Only the bare command in command position is rewritten; with arguments the
    options differ (NPU614).

    Before:
        nvidia-smi
    After:
        npu-smi info
    """,
)
NVIDIA_SMI_QUERY = rule(
    "NPU614", "nvidia-smi-query", LOW,
    "`nvidia-smi` with arguments (GPU counting with `-L`, `--query-gpu`) or as an argument: TODO.",
    """
    npu-smi has other options and output formats, so queries are not translated. Counting GPUs
    (`$(nvidia-smi -L | wc -l)`) is the usual case: on Ascend count NPUs with
    `python -c "import torch, torch_npu; print(torch.npu.device_count())"`, or read `npu-smi info -l`.

    Before:
        NPROC=$(nvidia-smi -L | wc -l)
    After:
        # TODO(ascend-port): NPU614 [low] nvidia-smi -L counts GPUs; ...
        NPROC=$(nvidia-smi -L | wc -l)
    """,
)
DEVICE_FLAG = rule(
    "NPU615", "device-flag", HIGH,
    "`--device cuda`, `--device=cuda:0` (and `--device-type`) command-line arguments -> `npu`.",
    """
    The value of a `--device`, `--device-type` or `--device_type` argument that is a CUDA device string, quoted
    or not, in shell code, Makefile recipes, Dockerfile `RUN` and notebook `!` lines. The Python side (NPU104) ports
    the argparse defaults and choices, so both ends agree.

    Before:
        python train.py --device cuda:0
    After:
        python train.py --device npu:0
    """,
)
BACKEND_FLAG = rule(
    "NPU616", "backend-flag", HIGH,
    "`--backend nccl`, `--dist-backend=nccl`, `--ddp_backend nccl` command-line arguments -> `hccl`.",
    """
    HCCL is the collective backend of torch_npu. The value `nccl` (and `cuda:nccl` in a device:backend list) of
    `--backend`, `--dist-backend`, `--dist_backend`, `--ddp-backend`, `--ddp_backend`, `--distributed-backend`.
    `torchrun` itself needs no change.

    Before:
        torchrun train.py --backend nccl
    After:
        torchrun train.py --backend hccl
    """,
)

# --- configs: YAML and JSON ----------------------------------------------------------------------------------------

CONFIG_DEVICE = rule(
    "NPU620", "config-device", MEDIUM,
    "Config keys that name a device (`device: cuda`, `device_type`, `accelerator: cuda`) -> `npu` in YAML/JSON.",
    """
    A mapping key containing `device` (or `accelerator`) whose value is `cuda` or `cuda:N`. The key is the
    evidence, hence medium confidence. YAML keeps its comments, quoting and layout (only the value is replaced);
    JSON keeps its formatting byte for byte.

    Before:
        device: cuda          # "cuda" or "cpu"
    After:
        device: npu          # "cuda" or "cpu"
    """,
)
CONFIG_BACKEND = rule(
    "NPU621", "config-backend", MEDIUM,
    "Config keys that name a distributed backend (`backend`, `dist_backend`, `ddp_backend`) with `nccl` -> `hccl`.",
    """
    A mapping key containing `backend` whose value is `nccl` (or a `cuda:nccl,cpu:gloo` list) in YAML or JSON.

    Before:
        dist_backend: nccl
    After:
        dist_backend: hccl
    """,
)
ACCELERATE_MULTI_GPU = rule(
    "NPU622", "accelerate-multi-gpu", MEDIUM,
    "Hugging Face accelerate configs: `distributed_type: MULTI_GPU` -> `MULTI_NPU`.",
    """
    accelerate has a distributed type of its own for Ascend (`DistributedType.MULTI_NPU`, backend hccl).

    Before:
        distributed_type: MULTI_GPU
    After:
        distributed_type: MULTI_NPU
    """,
)
LIGHTNING_GPU_ACCELERATOR = rule(
    "NPU623", "lightning-gpu-accelerator", LOW,
    "`accelerator: gpu` (PyTorch Lightning): TODO, Lightning has no built-in Ascend accelerator.",
    """
    Lightning accepts `npu` only once a custom Accelerator is registered (upstream support was proposed in
    Lightning-AI/pytorch-lightning#19498 and not merged), so `gpu` is not rewritten. YAML gets a TODO comment; JSON
    has no comments, so the finding is only reported.

    Before:
        accelerator: gpu
    After:
        # TODO(ascend-port): NPU623 [low] Lightning has no built-in Ascend accelerator ...
        accelerator: gpu
    """,
)

# --- containers ----------------------------------------------------------------------------------------------------

CUDA_BASE_IMAGE = rule(
    "NPU630", "cuda-base-image", LOW,
    "Dockerfile `FROM nvidia/cuda...`, `nvcr.io/...` or a CUDA `pytorch/pytorch` image: TODO naming the Ascend "
    "image family.",
    """
    The image must bring CANN instead of CUDA: the `ascendai/cann` images (tags such as
    `8.5.0-910b-ubuntu22.04-py3.11`) or an Ascend PyTorch image built on them. Choose the CANN version that your
    NPU driver and torch_npu release support, then install torch and torch-npu in it.

    Before:
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
    After:
        # TODO(ascend-port): NPU630 [low] CUDA base image: use an Ascend CANN image ...
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
    """,
)
