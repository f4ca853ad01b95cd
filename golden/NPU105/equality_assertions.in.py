# unittest's equality assertions compare a device as `==` does (gpytorch's priors tests: `.cuda()` is ported, and the
# device type asserted must follow). A dtype or a library's backend compared with "cuda" is no device: it stays.
import unittest

import torch


class PriorTest(unittest.TestCase):
    def test_to_gpu(self):
        if not torch.cuda.is_available():
            return
        x = torch.ones(2).cuda()
        self.assertEqual(x.device.type, "cuda")
        self.assertEqual("cuda", x.device.type)
        self.assertNotEqual(str(x.device), "cuda:1")

    def test_not_a_device(self):
        backend = torch.backends.cuda.preferred_linalg_library()
        self.assertEqual(x.dtype, "cuda")
        self.assertEqual(backend, "cuda")
        self.assertEqual(x.device.type, "cpu")
