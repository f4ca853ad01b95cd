"""What ascend-port knows about third-party packages on Ascend NPUs: the data behind the report's dependency matrix.

Statuses:

- ``compatible``: runs on Ascend as it is (with torch_npu installed); nothing in the requirement changes.
- ``replace``: has an Ascend counterpart; the requirement and the code that uses it change (the counterpart is named).
- ``unsupported``: CUDA-only, with no Ascend build or counterpart: the code that needs it is manual work.
- ``n.a.``: no device code, nothing to port (numpy, pyyaml, ...). A package this table does not know is also
  shown ``n.a.`` but marked unknown (``known: false``): check it has no CUDA-only code.

The table is deliberately small: the packages GPU training code imports most and the ones where Ascend differs.
Facts come from /work/shared/reference (torch_npu 2.14.0 wheel, transformers 5.23.0, accelerate 1.15.0,
msFmkTransplt) and the projects' own sources (DeepSpeed's ``accelerator/npu_accelerator.py``, bitsandbytes'
``backends/npu``). Requirements that NPU600 removes and that are not listed here (``nvidia-*``, ``cupy-cuda*``) get
``unsupported`` with NPU600's reason, so the matrix and the port never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_port.core import library_support
from ascend_port.core.cuda_packages import removal_reason
from ascend_port.formats.requirement import canonical
from ascend_port.rules.registry import rule_named

TRITON_KERNEL_RULE = rule_named("triton-kernel").id

COMPATIBLE, REPLACE, UNSUPPORTED, NOT_APPLICABLE = "compatible", "replace", "unsupported", "n.a."
STATUSES = (COMPATIBLE, REPLACE, UNSUPPORTED, NOT_APPLICABLE)


@dataclass(frozen=True)
class Package:
    name: str  # canonical distribution name (PEP 503)
    imports: tuple[str, ...]  # top-level import names
    status: str
    replacement: str  # what to use on Ascend; empty when nothing changes
    note: str


def _p(name: str, imports: str, status: str, replacement: str, note: str) -> Package:
    return Package(name, tuple(imports.split()), status, replacement, note)


_OWN: tuple[Package, ...] = (
    _p(
        "torch",
        "torch",
        COMPATIBLE,
        "torch + torch-npu of the same version",
        "install a CPU (not CUDA) torch build and torch-npu X.Y.Z for torch X.Y.Z (torch_npu refuses CUDA builds); "
        "CANN provides the runtime",
    ),
    _p("torch-npu", "torch_npu", COMPATIBLE, "", "the Ascend backend of PyTorch"),
    _p(
        "torchvision",
        "torchvision",
        COMPATIBLE,
        "",
        "CPU build matching torch; tensors run on NPU through torch_npu (torch_npu.contrib has nms/roi_align/iou)",
    ),
    _p("torchaudio", "torchaudio", COMPATIBLE, "", "CPU build matching torch"),
    _p(
        "triton",
        "triton",
        REPLACE,
        "triton-ascend",
        "Triton-Ascend replaces community triton (they cannot be installed together); kernels need review "
        f"({TRITON_KERNEL_RULE})",
    ),
    _p("triton-ascend", "", COMPATIBLE, "", "Triton for Ascend NPUs"),
    _p(
        "flash-attn",
        "flash_attn",
        REPLACE,
        "torch_npu.npu_fusion_attention",
        "CUDA-only; mind scale (default 1.0), mask polarity and causal alignment (NPU4xx)",
    ),
    _p(
        "xformers",
        "xformers",
        REPLACE,
        "F.scaled_dot_product_attention or torch_npu.npu_fusion_attention",
        "no NPU build: memory_efficient_attention fails with 'No operator found' on NPU",
    ),
    _p(
        "apex",
        "apex amp_C",
        REPLACE,
        "torch.npu.amp, torch.optim (AdamW, SGD), Ascend's apex patch",
        "amp_C (apex's CUDA extension) must be removed; FusedAdam -> torch.optim.AdamW",
    ),
    _p(
        "nvidia-ml-py",
        "pynvml",
        UNSUPPORTED,
        "npu-smi info, torch.npu.mem_get_info / torch.npu.memory_*",
        "NVML talks to NVIDIA drivers only",
    ),
    _p(
        "pynvml",
        "",
        UNSUPPORTED,
        "npu-smi info, torch.npu.mem_get_info / torch.npu.memory_*",
        "NVML talks to NVIDIA drivers only",
    ),
    _p("pycuda", "pycuda", UNSUPPORTED, "", "CUDA driver bindings"),
    _p("cupy", "cupy", UNSUPPORTED, "", "CuPy is built for CUDA; there is no Ascend build"),
    _p("tensorrt", "tensorrt", UNSUPPORTED, "", "NVIDIA's inference runtime"),
    _p("vllm", "vllm", REPLACE, "vllm-ascend (vLLM's Ascend plugin)", "install vllm with the vllm-ascend plugin"),
    _p(
        "transformers",
        "transformers",
        COMPATIBLE,
        "",
        "detects NPUs (is_torch_npu_available); FlashAttention-2 runs on npu_fusion_attention; ddp_backend='hccl'",
    ),
    _p("accelerate", "accelerate", COMPATIBLE, "", "picks MULTI_NPU and hccl when torch_npu is available"),
    _p("peft", "peft", COMPATIBLE, "", "pure PyTorch on top of transformers"),
    _p("trl", "trl", COMPATIBLE, "", "pure PyTorch on top of transformers/accelerate"),
    _p(
        "deepspeed",
        "deepspeed",
        COMPATIBLE,
        "",
        "has an NPU accelerator (accelerator/npu_accelerator.py); "
        "CUDA-only op builders (fused Adam, ...) are not available",
    ),
    _p(
        "bitsandbytes",
        "bitsandbytes",
        COMPATIBLE,
        "",
        "recent releases have an NPU backend for part of the ops: check the quantisation you use",
    ),
    _p("mindiesd", "mindiesd", COMPATIBLE, "", "Huawei's MindIE-SD layers for Ascend"),
    _p("numpy", "numpy", NOT_APPLICABLE, "", "no device code"),
    _p("scipy", "scipy", NOT_APPLICABLE, "", "no device code"),
    _p("pandas", "pandas", NOT_APPLICABLE, "", "no device code"),
    _p("pyyaml", "yaml", NOT_APPLICABLE, "", "no device code"),
    _p("tqdm", "tqdm", NOT_APPLICABLE, "", "no device code"),
    _p("pillow", "PIL", NOT_APPLICABLE, "", "no device code"),
    _p("safetensors", "safetensors", NOT_APPLICABLE, "", "no device code"),
    _p("sentencepiece", "sentencepiece", NOT_APPLICABLE, "", "no device code"),
    _p("tokenizers", "tokenizers", NOT_APPLICABLE, "", "no device code"),
    _p("datasets", "datasets", NOT_APPLICABLE, "", "no device code"),
    _p("einops", "einops", NOT_APPLICABLE, "", "no device code"),
    _p("wandb", "wandb", NOT_APPLICABLE, "", "no device code"),
    _p("tensorboard", "tensorboard", NOT_APPLICABLE, "", "no device code"),
)

# The libraries that take device or backend names (data/library_support.json, which the NPU8xx rules read too):
# their rows replace this module's, so the matrix and the TODOs say the same.
_TABLE = tuple(
    Package(
        name,
        row.imports if name == row.name else (),
        row.status,
        row.replacement,
        f"on Ascend: {row.accepts}; {row.way}",
    )
    for row in library_support.libraries()
    for name in (row.name, *row.also)
)
PACKAGES: tuple[Package, ...] = (*(p for p in _OWN if p.name not in {t.name for t in _TABLE}), *_TABLE)
BY_NAME: dict[str, Package] = {p.name: p for p in PACKAGES}
BY_IMPORT: dict[str, Package] = {name: p for p in PACKAGES for name in p.imports}


# Top-level import names whose distribution is spelt differently (the matrix names what ``pip install`` takes).
# ``_pytest`` is pytest's own package; FlashAttention-3 (the hopper build) installs ``flash_attn_interface``.
IMPORT_DISTRIBUTIONS: dict[str, str] = {
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "attr": "attrs",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "pyjwt",
    "git": "gitpython",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyopenssl",
    "serial": "pyserial",
    "zmq": "pyzmq",
    "fitz": "pymupdf",
    "docx": "python-docx",
    "magic": "python-magic",
    "faiss": "faiss-cpu",
    "pkg_resources": "setuptools",
    "_pytest": "pytest",
    "_cffi_backend": "cffi",
    "flash_attn_interface": "flash-attn-3",
    "google.protobuf": "protobuf",
    "azureml.core": "azureml-core",
    "quark": "amd-quark",
    "optimi": "torch-optimi",
    "flute": "flute-kernel",
    "Mykytea": "kytea",
    "mpl_toolkits": "matplotlib",
    "yaml": "pyyaml",
    "PIL": "pillow",
}


# Namespace packages: the first two levels of the import name the distribution (``google.cloud``: google-cloud-*).
NAMESPACE_PACKAGES = frozenset({"google", "azureml", "flytekitplugins"})


def lookup(name: str) -> Package | None:
    """The table entry for a distribution name, or NPU600's verdict for CUDA-only wheels it knows by pattern.

    A build of flash-attn under another name (``flash-attn-3``, the hopper build that installs
    ``flash_attn_interface``) is flash-attn for the matrix: its calls are ported the same way, so it is
    ``replace``, as the NPU600 note ("npu_fusion_attention replaces it") says."""
    key = canonical(name)
    if key in BY_NAME:
        return BY_NAME[key]
    if key.startswith("flash-attn-"):
        flash = BY_NAME["flash-attn"]
        return Package(key, (), flash.status, flash.replacement, flash.note)
    reason = removal_reason(key)
    if reason is not None:
        return Package(key, (), UNSUPPORTED, "", reason)
    return None


def distribution_for_import(module: str) -> str | None:
    """The distribution that provides top-level module ``module`` (its own name when the tables do not say), or
    None for a private module (``_C``, ``_ext``: a project's compiled extension, not something to install)."""
    package = BY_IMPORT.get(module)
    if package is not None:
        return package.name
    if module in IMPORT_DISTRIBUTIONS:
        return IMPORT_DISTRIBUTIONS[module]
    if module.startswith("_"):
        return None
    return canonical(module)
