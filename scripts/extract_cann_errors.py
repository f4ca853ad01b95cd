"""Writes ``ascend_port/data/cann_errors.json``, the table behind ``ascend-port error``.

Two parts, each entry with its source and an example taken from that source:

- extracted from torch_npu's wheels (never installed: ``pip download --no-deps torch-npu==2.5.1`` and ``==2.14.0``,
  unzipped): the ACL codes torch_npu itself explains after "error code is N"
  (``include/torch_npu/csrc/core/npu/NPUErrorCodes.h``), the runtime codes it does not explain
  (``include/acl/error_codes/rt_error_codes.h``: name and comment), HCCL's ``HcclResult`` codes
  (``third_party/hccl/inc/hccl/hccl_types.h``) and torch_npu's own ``ERRxxxxx`` codes
  (``torch_npu/utils/_error_code.py``);
- curated below (``CURATED``): CANN error codes (E*), aclnn return codes, out-of-memory, HCCL timeouts and the
  device faults, from the CANN documentation and public issue reports. A curated entry for an extracted code
  replaces it (same ``id``).

Run: ``python scripts/extract_cann_errors.py /tmp/wheels/torch_npu-2.5.1 /tmp/wheels/torch_npu-2.14.0`` (the folders
the two wheels were unzipped into).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "ascend_port" / "data" / "cann_errors.json"
NPU_ERROR_CODES = "torch_npu/include/torch_npu/csrc/core/npu/NPUErrorCodes.h"
RT_ERROR_CODES = "torch_npu/include/third_party/acl/inc/acl/error_codes/rt_error_codes.h"
HCCL_TYPES = "torch_npu/include/third_party/hccl/inc/hccl/hccl_types.h"
ERROR_MODULE = "torch_npu/utils/_error_code.py"
LOG_FIX = "Rectify the fault based on the error information in the ascend log."
# How a numeric code appears in a log: torch_npu's "error code is N", CANN's "runtime result = N", "ErrCode=N",
# "aclnnStatus=N", "ret = N", "failed: N".
NUMERIC = r"(?:error code is:?|runtime result =|ErrCode=|aclnnStatus=|ret =|failed:)\s*{code}\b"

# tier: 0 a cause (the program, the environment, memory), 1 a device fault (a kernel crashed), 2 a report of a
# failure (a code naming the call that failed), 3 an internal error (E*9999: something failed inside CANN), 4 a
# consequence (a timeout waiting for another rank), 5 a tag (torch_npu's ERRxxxxx, which labels the message it
# follows), 6 a warning. A log's findings are ordered by tier, then by first line.
DOC = "https://www.hiascend.com/document/detail/zh/canncommercial/latest/maintenref/troubleshooting/"
DOC_EN = "https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/"
FAMILY_DOC = DOC + "troubleshooting_0225.html"  # the code's letters: level, module; 9xxx = internal
INNER_DOC = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/82RC1alpha001/maintenref/troubleshooting/atlaserrorcode_15_0314.html"
AICORE_DOC = DOC + "troubleshooting_0004.html"
ACLNN_CODES = (
    "https://www.hiascend.com/document/detail/zh/canncommercial/latest/API/aolapi/atlasascendc_api_07_1205.html"
)
BLOCKING = "rerun with ASCEND_LAUNCH_BLOCKING=1 so the error is raised at the failing operator"
HCCL_LOCATE = DOC_EN + "API/hcclug/hcclug_000025.html"


def curated() -> list[dict[str, object]]:
    def entry(
        ident: str,
        kind: str,
        tier: int,
        pattern: str,
        cause: str,
        fix: str,
        source: str,
        example: str,
        code: str | None = None,
        name: str | None = None,
        releases: str = "all",
    ) -> dict[str, object]:
        return {
            "id": ident,
            "kind": kind,
            "code": code,
            "name": name,
            "pattern": pattern,
            "tier": tier,
            "cause": cause,
            "fix": fix,
            "source": source,
            "releases": releases,
            "example": example,
        }

    def inner(letter: str, module: str, example: str, source: str) -> dict[str, object]:
        code = f"E{letter}9999"
        return entry(
            f"cann-{code}",
            "cann",
            3,
            rf"\b{code}\b",
            f"An internal error of CANN's {module} module (E*9xxx codes are internal); it reports a failure "
            "whose cause is in the lines around it or in an earlier error.",
            "Read the lines after it (the TraceBack of CANN messages) and look for an earlier error in the "
            "log (an out-of-memory, an aclnn parameter error, a device fault); if there is none, collect the "
            "CANN logs (~/ascend/log/debug/plog) and ask Huawei support.",
            f"{INNER_DOC} (module letters: {FAMILY_DOC}); log: {source}",
            example,
            code=code,
        )

    return [
        # --- ACL runtime codes that need more than "see the ascend log" -----------------------------------------
        entry(
            "acl-507035",
            "acl",
            1,
            NUMERIC.format(code=507035),
            "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: a kernel on the AI Vector core faulted (an address out of range, "
            "a UB overflow, often input values out of range such as indices). The error is reported at the next "
            "synchronisation, so the Python line in the traceback is often after the faulting operator.",
            f"Find the operator in 'fault kernel_name=' and the 'errorStr' of the EZ9999 lines; {BLOCKING}; check "
            "that op's inputs (indices within range, no NaN/Inf, supported shapes); update CANN and torch_npu if "
            "it is a known operator bug.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('The vector core execution is abnormal'); {AICORE_DOC}; "
            "https://github.com/vllm-project/vllm-ascend/issues/6359",
            "NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(stream), error code is 507035",
            code="507035",
            name="ACL_ERROR_RT_VECTOR_CORE_EXCEPTION",
        ),
        entry(
            "acl-507015",
            "acl",
            1,
            NUMERIC.format(code=507015),
            "ACL_ERROR_RT_AICORE_EXCEPTION: a kernel on the AI Core faulted; reported at the next synchronisation.",
            f"Find the operator in 'fault kernel_name=' and the 'errorStr' of the EZ9999/EE9999 lines; {BLOCKING}; "
            "check the operator's inputs and shapes; update CANN/torch_npu if it is a known operator bug.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('The aicore execution is abnormal'); {AICORE_DOC}; "
            "https://github.com/MinghuasLab/flash-attention-npu/issues/237",
            "NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507015",
            code="507015",
            name="ACL_ERROR_RT_AICORE_EXCEPTION",
        ),
        entry(
            "acl-507014",
            "acl",
            1,
            NUMERIC.format(code=507014),
            "ACL_ERROR_RT_AICORE_TIMEOUT: an AI Core kernel ran past its time limit (a hang in the kernel, or a "
            "very large input).",
            f"{BLOCKING}; find the kernel in the log; reduce the input size to check whether it is a hang.",
            f"torch_npu 2.14.0 {RT_ERROR_CODES} (ACL_ERROR_RT_AICORE_TIMEOUT) and {NPU_ERROR_CODES}",
            "error code is 507014",
            code="507014",
            name="ACL_ERROR_RT_AICORE_TIMEOUT",
        ),
        entry(
            "acl-507048",
            "acl",
            4,
            NUMERIC.format(code=507048),
            "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: an internal task timed out; with HCCL it is the wait for another rank "
            "(EI0002 beside it).",
            "Look for the first error on the other ranks (this rank was waiting); if all ranks wait, check that "
            "they run the same collectives, and raise HCCL_EXEC_TIMEOUT for long steps.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('The execution of the internal task times out'); "
            "https://github.com/vllm-project/vllm-ascend/issues/1443",
            "NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048",
            code="507048",
            name="ACL_ERROR_RT_FFTS_PLUS_TIMEOUT",
        ),
        entry(
            "acl-507001",
            "acl",
            2,
            NUMERIC.format(code=507001),
            "ACL_ERROR_RT_TS_ERROR: an internal error of the device's task scheduler; reported on device-to-device "
            "copies (copy_d2d) with the expandable-segments allocator.",
            "If it happens in a copy (copy_d2d, CopyKernel.cpp) with PYTORCH_NPU_ALLOC_CONF=expandable_segments:True, "
            "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:False (the maintainers' answer); otherwise read the "
            "ascend log.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('An internal error occurs in the task scheduler module on the "
            "device'); https://github.com/vllm-project/vllm-ascend/issues/116",
            "RuntimeError: copy_d2d:torch_npu/csrc/aten/common/CopyKernel.cpp:274 NPU function error: "
            "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507001",
            code="507001",
            name="ACL_ERROR_RT_TS_ERROR",
        ),
        entry(
            "acl-107020",
            "acl",
            4,
            NUMERIC.format(code=107020),
            "ACL_ERROR_RT_TASK_TIMEOUT: a task on the device timed out (torch_npu treats it as an NPU timeout and "
            "lets the other processes exit first).",
            "Look for an earlier error (another rank's failure, a collective that not every rank reached); raise "
            "HCCL_EXEC_TIMEOUT if a step is legitimately long.",
            f"torch_npu 2.14.0 {RT_ERROR_CODES} and {ERROR_MODULE} (npu_timeout_exception 'error code is 107020')",
            "error code is 107020",
            code="107020",
            name="ACL_ERROR_RT_TASK_TIMEOUT",
        ),
        entry(
            "acl-207018",
            "oom",
            0,
            NUMERIC.format(code=207018),
            "ACL_ERROR_RT_DEVICE_OOM: the device's memory is exhausted.",
            "Reduce the batch size or sequence length, free cached blocks (torch.npu.empty_cache()), set "
            "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True, and check npu-smi info for other processes on the "
            "device.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('The memory on the device is exhausted') and {RT_ERROR_CODES}",
            "error code is 207018",
            code="207018",
            name="ACL_ERROR_RT_DEVICE_OOM",
        ),
        entry(
            "acl-207001",
            "oom",
            0,
            NUMERIC.format(code=207001),
            "ACL_ERROR_RT_MEMORY_ALLOCATION: a device memory allocation failed (out of memory).",
            "As for NPU out of memory: smaller batches, PYTORCH_NPU_ALLOC_CONF=expandable_segments:True, "
            "npu-smi info for other processes.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('Failed to apply for memory') and {RT_ERROR_CODES}",
            "error code is 207001",
            code="207001",
            name="ACL_ERROR_RT_MEMORY_ALLOCATION",
        ),
        entry(
            "acl-107002",
            "acl",
            0,
            NUMERIC.format(code=107002),
            "ACL_ERROR_RT_CONTEXT_NULL: no device context in this thread: the device was never set in this "
            "process or thread (a worker thread, a forked process).",
            "Call torch.npu.set_device(local_rank) at the start of each process and thread that uses the NPU; use "
            "the 'spawn' start method for multiprocessing.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('Check whether acl.rt.set_context or acl.rt.set_device is called')",
            "error code is 107002",
            code="107002",
            name="ACL_ERROR_RT_CONTEXT_NULL",
        ),
        entry(
            "acl-207004",
            "acl",
            0,
            NUMERIC.format(code=207004),
            "ACL_ERROR_RT_NO_DEVICE: the device is unavailable (not visible to the process, or faulty).",
            "Check npu-smi info, ASCEND_RT_VISIBLE_DEVICES and the container's --device options; the device IDs "
            "must exist.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('The device is unavailable') and {RT_ERROR_CODES}",
            "error code is 207004",
            code="207004",
            name="ACL_ERROR_RT_NO_DEVICE",
        ),
        entry(
            "acl-507033",
            "acl",
            1,
            NUMERIC.format(code=507033),
            "ACL_ERROR_RT_DEV_SETUP_ERROR: the device could not be opened (set_device failed), often because "
            "its memory could not be allocated (EL0004 beside it) or it is held by another process.",
            "Check npu-smi info for processes holding the device and its memory; free or pick another device.",
            f"torch_npu 2.14.0 {NPU_ERROR_CODES} ('Failed to start the device'); "
            "https://github.com/hw-native-sys/PTOAS/pull/341",
            "[ERROR] aclrtSetDevice(deviceId) failed: 507033",
            code="507033",
            name="ACL_ERROR_RT_DEV_SETUP_ERROR",
        ),
        entry(
            "acl-507053",
            "acl",
            1,
            NUMERIC.format(code=507053),
            "ACL_ERROR_RT_DEVICE_MEM_ERROR: a device memory (HBM) fault: hardware.",
            "Check npu-smi info (Health) and the device's event log; run on another device; a recurring fault "
            "needs the hardware checked (ascend-dmi).",
            f"torch_npu 2.14.0 {RT_ERROR_CODES} (ACL_ERROR_RT_DEVICE_MEM_ERROR 'device MEM ERROR'); "
            f"{DOC}troubleshooting_0005.html",
            "error code is 507053",
            code="507053",
            name="ACL_ERROR_RT_DEVICE_MEM_ERROR",
            releases="torch_npu 2.14.0 headers",
        ),
        entry(
            "acl-507054",
            "acl",
            1,
            NUMERIC.format(code=507054),
            "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: an uncorrectable ECC error in the device memory: hardware.",
            "Run on another device and have this one checked (npu-smi info, ascend-dmi); restarting the job on "
            "the same device will fail again.",
            f"torch_npu 2.14.0 {RT_ERROR_CODES}; {DOC}troubleshooting_0005.html",
            "error code is 507054",
            code="507054",
            name="ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR",
            releases="torch_npu 2.14.0 headers",
        ),
        # --- aclnn (the operator API torch_npu calls) ---------------------------------------------------------
        entry(
            "aclnn-161001",
            "aclnn",
            0,
            NUMERIC.format(code=161001),
            "ACLNN_ERR_PARAM_NULLPTR: an aclnn operator got a null tensor where one is required (an optional "
            "input the operator does need).",
            "Check the arguments of the operator named in the message (aclnnXxx); pass every tensor it requires.",
            ACLNN_CODES,
            "aclnnCausalConv1dGetWorkspaceSize failed with aclnnStatus=161001.",
            code="161001",
            name="ACLNN_ERR_PARAM_NULLPTR",
        ),
        entry(
            "aclnn-161002",
            "aclnn",
            0,
            NUMERIC.format(code=161002),
            "ACLNN_ERR_PARAM_INVALID: an aclnn operator rejected its arguments (a dtype, shape or format it does "
            "not support, or dtypes that do not promote).",
            "Read the EZ1001/EZ0xxx line beside it for the argument; cast to a supported dtype (.float(), "
            ".to(torch.int32)) or change the shape; otherwise run that operator on CPU.",
            ACLNN_CODES,
            "error code is 161002",
            code="161002",
            name="ACLNN_ERR_PARAM_INVALID",
        ),
        entry(
            "aclnn-361001",
            "aclnn",
            2,
            NUMERIC.format(code=361001),
            "ACLNN_ERR_RUNTIME_ERROR: an aclnn operator's call to the NPU runtime failed.",
            "Look for the runtime error beside it (out of memory, a device fault).",
            ACLNN_CODES,
            "error code is 361001",
            code="361001",
            name="ACLNN_ERR_RUNTIME_ERROR",
        ),
        entry(
            "aclnn-561000",
            "aclnn",
            2,
            NUMERIC.format(code=561000),
            "ACLNN_ERR_INNER: an internal error in an aclnn operator.",
            "Read the EZ9999 lines beside it; update CANN (the operator package) to the release torch_npu pairs with.",
            ACLNN_CODES,
            "error code is 561000",
            code="561000",
            name="ACLNN_ERR_INNER",
        ),
        entry(
            "aclnn-561001",
            "aclnn",
            0,
            NUMERIC.format(code=561001),
            "ACLNN_ERR_INNER_INFERSHAPE_ERROR: the operator could not infer its output shape from the inputs "
            "(shapes it does not accept).",
            "Check the input shapes of the operator named in the message.",
            ACLNN_CODES,
            "error code is 561001",
            code="561001",
            name="ACLNN_ERR_INNER_INFERSHAPE_ERROR",
        ),
        entry(
            "aclnn-561002",
            "aclnn",
            0,
            NUMERIC.format(code=561002),
            "ACLNN_ERR_INNER_TILING_ERROR: the operator's tiling failed (shapes or attributes outside what the "
            "kernel supports, or an environment that does not match the kernel package).",
            "Check the operator's input shapes and attributes against its documentation; check that the CANN "
            "environment (set_env.sh) matches the kernel package.",
            f"{ACLNN_CODES}; https://github.com/flashserve/flash-linear-attention-npu/issues/333",
            "RuntimeError: aclnnCausalConv1dGetWorkspaceSize failed with aclnnStatus=561002.",
            code="561002",
            name="ACLNN_ERR_INNER_TILING_ERROR",
        ),
        entry(
            "aclnn-561003",
            "aclnn",
            0,
            NUMERIC.format(code=561003),
            "ACLNN_ERR_INNER_FIND_KERNEL_ERROR: no kernel binary for this operator and these inputs (the "
            "operator binary package is not installed, or the dtype/shape has no kernel).",
            "Install the CANN kernels package of your SoC (Ascend-cann-kernels-<soc>) and source set_env.sh; "
            "else cast the inputs to a supported dtype.",
            ACLNN_CODES,
            "error code is 561003",
            code="561003",
            name="ACLNN_ERR_INNER_FIND_KERNEL_ERROR",
        ),
        entry(
            "aclnn-561103",
            "aclnn",
            2,
            NUMERIC.format(code=561103),
            "ACLNN_ERR_INNER_NULLPTR: an aclnn operator failed inside (a null pointer); the EZ9999 lines beside it "
            "say where (e.g. a kernel config that could not be parsed).",
            "Read the EZ9999 lines; a mismatch between CANN, its kernels package and torch_npu is the common "
            "cause: install the CANN release torch_npu's release notes pair with.",
            f"{ACLNN_CODES}; https://github.com/vllm-project/vllm-ascend/issues/4859",
            "call aclnnInplaceZero failed, error code is 561103",
            code="561103",
            name="ACLNN_ERR_INNER_NULLPTR",
        ),
        entry(
            "aclnn-561107",
            "aclnn",
            0,
            NUMERIC.format(code=561107),
            "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND: ASCEND_OPP_PATH is not set: the CANN environment was not loaded.",
            "source /usr/local/Ascend/ascend-toolkit/set_env.sh (or your CANN install's set_env.sh) before running.",
            ACLNN_CODES,
            "error code is 561107",
            code="561107",
            name="ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND",
        ),
        entry(
            "cann-EZ1001",
            "aclnn",
            0,
            r"\bEZ1001\b|not implemented for DT_\w+,\s*should be in dtype support list",
            "AclNN_Parameter_Error: an aclnn operator rejected an argument, most often a dtype it does not "
            "implement ('not implemented for DT_X, should be in dtype support list [...]').",
            "Cast the tensor to a dtype in the listed support list before the operator (e.g. .to(torch.int32) "
            "or .float()), or run that operator on CPU; the operator is the aclnnXxx named beside it.",
            "https://www.hiascend.com/document/detail/en/canncommercial/800/maintenref/troubleshooting/"
            "atlaserrorcode_15_0312.html",
            "AclNN_Parameter_Error(EZ1001): Parameter validation failed. Please check the log.",
            code="EZ1001",
            name="AclNN_Parameter_Error",
        ),
        entry(
            "cann-EZ1002",
            "aclnn",
            0,
            r"\bEZ1002\b",
            "Config_Error_Invalid_Environment_Variable: an environment variable the aclnn operators need is not "
            "set (the CANN environment was not loaded).",
            "source the CANN set_env.sh before running.",
            "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910beta1/maintenref/troubleshooting/"
            "atlaserrorcode_15_0392.html",
            "EZ1002: %s failed. Environment variable %s is not configured.",
            code="EZ1002",
            name="Config_Error_Invalid_Environment_Variable",
        ),
        entry(
            "cann-EZ0024",
            "aclnn",
            0,
            r"\bEZ0024\b",
            "Invalid_Argument: a parameter of an operator has a wrong value; the message names the parameter, "
            "the operator and the value expected.",
            "Pass the value the message asks for.",
            "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910beta3/maintenref/troubleshooting/"
            "atlaserrorcode_15_0444.html",
            "EZ0024: Parameter %s of operator %s has incorrect value %s. The correct one should be %s.",
            code="EZ0024",
            name="Invalid_Argument",
        ),
        entry(
            "cann-EZ0026",
            "aclnn",
            0,
            r"\bEZ0026\b",
            "Invalid_Argument: a parameter of an operator has a wrong value, with the reason in the message.",
            "Fix the value as the reason says.",
            "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910beta3/maintenref/troubleshooting/"
            "atlaserrorcode_15_0446.html",
            "EZ0026: Parameter %s of operator %s has incorrect value %s. Reason: %s.",
            code="EZ0026",
            name="Invalid_Argument",
        ),
        entry(
            "npu-cpu-fallback",
            "not-supported",
            6,
            r"The operator '[\w:.]+' is not currently supported on the NPU backend and will fall back to run on "
            r"the CPU",
            "torch_npu has no NPU kernel for this aten operator, so it runs on the CPU (copies to and from the "
            "device): slow, and it fails for operators without a CPU kernel either.",
            "A warning: the run goes on. For speed, replace the operator (see its NPU alternative in torch_npu) or "
            "keep that computation on CPU explicitly.",
            "torch_npu 2.14.0 lib/libtorch_npu.so (string 'is not currently supported on the NPU backend'); "
            "https://github.com/opendatalab/MinerU/issues/1695; https://github.com/Ascend/pytorch/issues/51",
            "Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU "
            "backend and will fall back to run on the CPU. This may have performance implications.",
        ),
        entry(
            "npu-no-cpu-kernel",
            "not-supported",
            0,
            r"Could not run '[\w:.]+' with arguments from the 'CPU' backend",
            "The operator has no NPU kernel, so torch_npu fell back to the CPU, and it has no CPU kernel either "
            "(e.g. aten::_scaled_dot_product_efficient_attention).",
            "Avoid the operator on the NPU: for attention use torch_npu.npu_fusion_attention or "
            "F.scaled_dot_product_attention without forcing the efficient backend (ascend-port's NPU4xx rules); "
            "otherwise move its inputs to CPU.",
            "https://github.com/vllm-project/vllm-omni/pull/755",
            "Error executing RPC: Could not run 'aten::_scaled_dot_product_efficient_attention' with arguments "
            "from the 'CPU' backend.",
        ),
        # --- out of memory ------------------------------------------------------------------------------------
        entry(
            "oom-tried-to-allocate",
            "oom",
            0,
            r"NPU out of memory\. Tried to allocate (?!more than 1EB)",
            "The NPU caching allocator could not get the memory a tensor needs: the model, batch or sequence "
            "does not fit, or memory is fragmented (reserved >> allocated).",
            "Reduce the batch size or sequence length, use gradient checkpointing or a sharded setup; if "
            "'reserved' is much larger than 'allocated', set PYTORCH_NPU_ALLOC_CONF=expandable_segments:True (or "
            "max_split_size_mb:N); check npu-smi info for other processes on the device.",
            "torch_npu 2.14.0 lib/libtorch_npu.so (string 'NPU out of memory. Tried to allocate'); "
            "https://github.com/vllm-project/vllm-ascend/issues/19; https://github.com/xingchensong/TouchNet/"
            "issues/100",
            "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total "
            "capacity; 49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved "
            "in total by PyTorch)",
        ),
        entry(
            "oom-more-than-1eb",
            "oom",
            0,
            r"NPU out of memory\. Tried to allocate more than 1EB memory",
            "Not a real shortage: the requested size is absurd, computed from garbage values (an uninitialised "
            "tensor, a kernel that wrote out of bounds earlier, an overflowed length).",
            "Check the values that size the allocation (lengths, shapes) just before the failing line; "
            f"{BLOCKING} to find the operator that corrupted them.",
            "torch_npu 2.14.0 lib/libtorch_npu.so (string 'NPU out of memory. Tried to allocate more than 1EB "
            "memory.'); https://github.com/flashserve/flash-linear-attention-npu/issues/149",
            "NPU out of memory. Tried to allocate more than 1EB memory",
        ),
        entry(
            "oom-memory-fraction",
            "oom",
            0,
            r"Allocation was preemptively rejected because it would exceed "
            r"per_process_memory_fraction",
            "torch.npu.set_per_process_memory_fraction() caps this process below what it asks for.",
            "Raise the fraction, or reduce the memory the step needs.",
            "torch_npu 2.14.0 lib/libtorch_npu.so (string 'Allocation was preemptively rejected because it would "
            "exceed per_process_memory_fraction limit')",
            "NPU out of memory. Allocation was preemptively rejected because it would exceed "
            "per_process_memory_fraction limit. Requested size: ",
            releases="torch_npu 2.14.0",
        ),
        entry(
            "cann-EL0004",
            "oom",
            0,
            r"\bEL0004\b",
            "Memory_Allocation_Failure (driver): device memory could not be allocated: not enough free memory, "
            "often held by another process.",
            "Check npu-smi info for processes on the device; stop them or use another device; reduce the memory "
            "the job reserves.",
            f"{DOC_EN}maintenref/troubleshooting/atlaserrorcode_15_0267.html; "
            "https://github.com/hw-native-sys/PTOAS/pull/341",
            "[PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.",
            code="EL0004",
            name="Memory_Allocation_Failure",
        ),
        # --- HCCL ---------------------------------------------------------------------------------------------
        entry(
            "cann-EI0002",
            "hccl",
            4,
            r"\bEI0002\b",
            "Communication_Error_Timeout: a collective waited for a remote rank past HCCL_EXEC_TIMEOUT (1800 s by "
            "default). Usually a consequence: another rank failed or is late, ranks run different collectives, "
            "or their sample counts differ.",
            "Find the first error on the other ranks (the 'remote rank' named); make every rank run the same "
            "collectives (same number of batches); grep the plog for 'error cqe' (network); raise "
            "HCCL_EXEC_TIMEOUT only for legitimately long steps.",
            f"{DOC}atlaserrorcode_15_0242.html; https://github.com/vllm-project/vllm-ascend/issues/3413",
            "EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. "
            "Reason: The Notify register has not received the Notify record from remote rank: [24].",
            code="EI0002",
            name="Communication_Error_Timeout",
        ),
        entry(
            "cann-EI0006",
            "hccl",
            1,
            r"\bEI0006\b",
            "Get_Socket_Timeout: HCCL could not connect to a remote rank within HCCL_CONNECT_TIMEOUT (120 s by "
            "default): that rank is stuck or late reaching the collective, or the link is down.",
            "Check the other ranks for errors or hangs first; if all ranks report it, raise HCCL_CONNECT_TIMEOUT "
            "(e.g. export HCCL_CONNECT_TIMEOUT=1200) and check the links (hccn_tool -i $devid -tls -g).",
            f"{DOC}atlaserrorcode_15_0246.html; https://github.com/vllm-project/vllm-ascend/issues/486",
            "EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did "
            "not send the data in time.",
            code="EI0006",
            name="Get_Socket_Timeout",
        ),
        entry(
            "cann-EI0001",
            "hccl",
            0,
            r"\bEI0001\b",
            "An HCCL environment variable is set to an invalid value; the message names it and its range.",
            "Correct or unset the variable the message names (HCCL_* variables).",
            f"{DOC_EN}API/hcclug/hcclug_000029.html",
            "If the error code EI0001 is displayed in the service logs, the HCCL environment variable configuration is "
            "abnormal.",
            code="EI0001",
        ),
        entry(
            "hccl-watchdog-timeout",
            "hccl",
            4,
            r"Watchdog caught collective operation timeout: WorkHCCL\(",
            "torch_npu's HCCL watchdog: a collective did not finish within the process group's timeout, then the "
            "process is taken down. Usually another rank failed first or ranks run different collectives.",
            "Find the first error on any rank (it is the cause); check that all ranks call the same collectives "
            "in the same order; raise the timeout with dist.init_process_group(timeout=...) only for long steps.",
            "torch_npu 2.14.0 lib/libtorch_npu.so (string 'Watchdog caught collective operation timeout: '); "
            "https://github.com/vllm-project/vllm-ascend/issues/382",
            "[Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, "
            "Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.",
        ),
        entry(
            "hccl-comm-init",
            "hccl",
            0,
            r"HCCL function error: HcclCommInitRootInfo",
            "The HCCL communicator could not be created: ranks disagree on the world size or root, the devices "
            "are not visible or are used by another job, or the nodes cannot reach each other.",
            "Check MASTER_ADDR/MASTER_PORT, the world size and ranks, ASCEND_RT_VISIBLE_DEVICES, stale processes "
            "on the devices (npu-smi info), and HCCL_IF_IP / HCCL_SOCKET_IFNAME for multi-node runs.",
            "https://github.com/vllm-project/vllm-ascend/issues/397",
            "RuntimeError: create:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:89 HCCL function error: "
            "HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_))",
        ),
        entry(
            "hccl-error-cqe",
            "hccl",
            1,
            r"\berror cqe\b",
            "An error completion queue entry: a network (RoCE) transfer between devices failed.",
            "Check the links between the nodes (hccn_tool -i $devid -link -g, -tls -g) and the switch.",
            f"{DOC}atlaserrorcode_15_0242.html (solution 4)",
            "Check whether the completion queue element (CQE) of the error exists in the plog(grep -rn 'error cqe')",
        ),
        # --- device faults: where the kernel failed -----------------------------------------------------------
        entry(
            "device-aicore-error",
            "device",
            1,
            r"there is an? (?:exception of )?(?:aivec|aicore|fftsplus aicore|fftsplus aivector|aic) error"
            r"|there is an? (?:aivec|aicore) error exception",
            "A kernel raised a hardware exception on an AI Core / AI Vector core; 'errorStr' says what (an "
            "address out of range, an illegal instruction, a UB overflow).",
            f"Find the operator ('fault kernel_name=' below it) and read errorStr; {BLOCKING}; check that "
            "operator's inputs (indices in range, shapes it supports); update CANN/torch_npu if it is a known bug.",
            f"{AICORE_DOC}; https://github.com/zai-org/GLM-OCR/issues/232",
            "EZ9999: The error from device(chipId:4, dieId:0), serial number is 2, there is an aivec error "
            "exception, core id is 11, error code = 0x10",
        ),
        entry(
            "device-aicpu-exception",
            "device",
            1,
            r"\[aicpu exception\]|Aicpu kernel execute failed",
            "A kernel on the AI CPU failed (often an operator that runs on the AI CPU with unsupported or invalid "
            "input, e.g. random number or int64 operators).",
            f"{BLOCKING}; find the operator in the lines after it; check its inputs; try a newer CANN.",
            "https://github.com/open-mmlab/mmcv/issues/3203",
            "EZ9999 Kernel task happen error, retCode=0x2a, [aicpu exception].[FUNC:PreCheckTaskErr]",
        ),
        entry(
            "device-kernel-failed",
            "device",
            1,
            r"Aicore kernel execute failed, .*fault kernel_name=",
            "The runtime names the kernel that failed on the AI Core ('fault kernel_name=').",
            f"The operator is the kernel's name (e.g. Maximum_..., fused_..._kernel); check its inputs; {BLOCKING}.",
            f"{AICORE_DOC}; https://github.com/vllm-project/vllm-ascend/issues/5043",
            "Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=31025, "
            "flip_num=554, fault kernel_name=fused_recurrent_gated_delta_rule_fwd_kernel_46",
        ),
        entry(
            "env-init-failed",
            "environment",
            0,
            r"\[Init\]\[Env\]init env failed",
            "CANN could not initialise its environment: Python packages CANN's operator compiler needs are "
            "missing from this environment (the maintainers' answer), or set_env.sh was not sourced.",
            "pip install numpy decorator sympy cffi protobuf attrs pyyaml pathlib2 scipy requests psutil absl-py; "
            "source the CANN set_env.sh.",
            "https://github.com/Ascend/pytorch/issues/7",
            "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
        ),
        # --- E*9999: internal errors of each module -----------------------------------------------------------
        inner(
            "Z", "operator (aclnn)", "EZ9999: Inner Error!", "https://github.com/vllm-project/vllm-ascend/issues/6359"
        ),
        inner(
            "E", "runtime", "EE9999: Internal error!", "https://github.com/MinghuasLab/flash-attention-npu/issues/237"
        ),
        inner("H", "AscendCL", "EH9999: Inner Error!", "https://github.com/Ascend/pytorch/issues/66"),
        inner("I", "HCCL", "EI9999: Inner Error!", f"{DOC_EN}API/hcclug/hcclug_000024.html"),
        inner(
            "1",
            "GE (graph engine)",
            "E19999: Inner Error!",
            "https://gitcode.com/cann/ge/blob/develop/docs/zh/user_guides/error_codes/E19999-Inner_Error.md",
        ),
        inner("3", "AI CPU", "E39999: Inner Error!", INNER_DOC),
        inner("L", "driver", "EL9999: Inner Error!", INNER_DOC),
        inner("J", "HCCP", "EJ9999: Inner Error!", INNER_DOC),
    ]


def cxx_map(text: str) -> dict[int, str]:
    """``{code, "text"}`` pairs of NPUErrorCodes.h, the C++ string continuations joined."""
    found: dict[int, str] = {}
    for match in re.finditer(r"\{(\d+),\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\}", text, re.S):
        parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", match.group(2), re.S)
        joined = "".join(parts).replace("\\\n", "").replace("\\n", "\n")
        found[int(match.group(1))] = re.sub(r"[ \t]+", " ", joined).strip()
    return found


def rt_names(text: str) -> dict[int, tuple[str, str]]:
    return {
        int(m.group(2)): (m.group(1), m.group(3).strip())
        for m in re.finditer(r"#define\s+(ACL_ERROR_\w+)\s+(\d+)\s*//\s*(.*)", text)
    }


def extracted(old: Path, new: Path) -> list[dict[str, object]]:
    old_map = cxx_map((old / NPU_ERROR_CODES).read_text())
    new_map = cxx_map((new / NPU_ERROR_CODES).read_text())
    names = rt_names((new / RT_ERROR_CODES).read_text())
    old_names = rt_names((old / RT_ERROR_CODES).read_text())
    entries: list[dict[str, object]] = []
    for code, text in sorted(new_map.items()):
        if code < 100000:
            continue  # the HCCL codes 1-24 of the same map: from hccl_types.h below
        cause, _, fix = text.partition("\n")
        name = names.get(code, ("", ""))[0] or None
        entries.append(
            {
                "id": f"acl-{code}",
                "kind": "acl",
                "code": str(code),
                "name": name,
                "pattern": NUMERIC.format(code=code),
                "tier": 0 if code in (200000, 207005) else 2,
                "cause": f"{name}: {cause.strip()}" if name else cause.strip(),
                "fix": fix.strip() or LOG_FIX,
                "source": f"torch_npu 2.14.0 {NPU_ERROR_CODES}",
                "releases": "torch_npu 2.5.1, 2.14.0" if code in old_map else "torch_npu 2.14.0",
                "example": f"error code is {code}",
            }
        )
    for code, (name, comment) in sorted(names.items()):
        if code in new_map:
            continue
        entries.append(
            {
                "id": f"acl-{code}",
                "kind": "acl",
                "code": str(code),
                "name": name,
                "pattern": NUMERIC.format(code=code),
                "tier": 2,
                "cause": f"{name}: {comment} (runtime return code; torch_npu gives no text for it).",
                "fix": LOG_FIX,
                "source": f"torch_npu 2.14.0 {RT_ERROR_CODES}",
                "releases": "torch_npu 2.5.1, 2.14.0" if code in old_names else "torch_npu 2.14.0",
                "example": f"runtime result = {code}",
            }
        )
    hccl = re.findall(r"(HCCL_E_\w+)\s*=\s*(\d+),\s*/\*\*<\s*(.*?)\s*\*/", (new / HCCL_TYPES).read_text())
    for name, value, comment in hccl:
        entries.append(
            {
                "id": f"hccl-{value}",
                "kind": "hccl",
                "code": f"HCCL{value}",
                "name": name,
                "pattern": rf"HCCL function error: [^\n]*error code is {value}\b|Hccl\w+, error code is {value}\b",
                "tier": 0 if name in ("HCCL_E_OOM", "HCCL_E_PARA") else 2,
                "cause": f"{name}: an HCCL call returned '{comment}'.",
                "fix": "Read the EI/EJ code printed beside it; for a timeout or connection failure, find the first error "
                "on the other ranks (HCCL fault locating: collect the CANN logs of all ranks).",
                "source": f"torch_npu 2.14.0 {HCCL_TYPES}; {HCCL_LOCATE}",
                "releases": "torch_npu 2.5.1, 2.14.0",
                "example": f"HCCL function error: HcclAllreduce, error code is {value}",
            }
        )
    entries.extend(torch_npu_codes(new))
    return entries


def torch_npu_codes(new: Path) -> list[dict[str, object]]:
    """ErrCode members of torch_npu/utils/_error_code.py: ERR<submodule:02><code:03>."""
    tree = ast.parse((new / ERROR_MODULE).read_text())
    codes: list[tuple[str, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ErrCode":
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Tuple):
                    number, text = (ast.literal_eval(e) for e in item.value.elts)
                    codes.append((item.targets[0].id, number, text))  # type: ignore[attr-defined]
    fixes = {
        "ACL": "The ACL error is named just above or below (NPU function error: ..., error code is N): decode that.",
        "HCCL": "The HCCL error is named beside it (HCCL function error: ..., error code is N, EI****).",
        "MEMORY": "Out of device memory: see the 'NPU out of memory' line.",
        "NOT_SUPPORT": "The feature or argument is not supported by torch_npu: see the message before the code.",
        "TIMEOUT": "Find the earlier error on this or another rank.",
    }
    return [
        {
            "id": f"torch_npu-ERR{number:03d}",
            "kind": "torch_npu",
            "code": f"ERR{number:03d}",
            "name": name,
            "pattern": rf"\bERR\d\d{number:03d}\b",
            "tier": 5,
            "cause": f"torch_npu's error code {name} ('{text}'); the two digits after ERR name the part of torch_npu "
            "(00 PTA, 01 OPS, 02 DIST, 03 GRAPH, 04 PROF, 99 UNKNOWN). It tags the message it follows.",
            "fix": fixes.get(name, "Read the message the code tags (the line before it)."),
            "source": f"torch_npu 2.5.1 and 2.14.0 {ERROR_MODULE}",
            "releases": "torch_npu 2.5.1, 2.14.0",
            "example": f"[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00{number:03d} PTA {text}",
        }
        for name, number, text in codes
        if number
    ]


def main(old: str, new: str) -> None:
    curated_entries = curated()
    ids = {e["id"] for e in curated_entries}
    entries = [*curated_entries, *(e for e in extracted(Path(old), Path(new)) if e["id"] not in ids)]
    OUT.write_text(json.dumps({"version": 1, "entries": entries}, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"{len(entries)} entries -> {OUT}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
