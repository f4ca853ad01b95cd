# unittest's equality assertions compare a device as `==` does (gpytorch's priors tests: `.cuda()` is ported, and the
# device type asserted must follow). A dtype or a library's backend compared with "cuda" is no device: it stays.
import unittest

import torch
import torch_npu


class PriorTest(unittest.TestCase):
    def test_to_gpu(self):
        if not torch.npu.is_available():
            return
        x = torch.ones(2).npu()
        self.assertEqual(x.device.type, "npu")
        self.assertEqual("npu", x.device.type)
        self.assertNotEqual(str(x.device), "npu:1")

    def test_not_a_device(self):
        backend = torch.backends.cuda.preferred_linalg_library()
        self.assertEqual(x.dtype, "cuda")
        self.assertEqual(backend, "cuda")
        self.assertEqual(x.device.type, "cpu")
