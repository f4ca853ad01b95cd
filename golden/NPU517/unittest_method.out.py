import unittest

import torch
import torch_npu

import selective_scan_cuda


class TestSelectiveScan(unittest.TestCase):
    def setUp(self):
        self.u = torch.randn(2, 4, 8).npu()

    @unittest.skipUnless(torch.cuda.is_available(), "tests the CUDA kernel selective_scan_cuda.fwd: none on the NPU")
    def test_forward(self):
        out = selective_scan_cuda.fwd(self.u, self.u, None)
        self.assertEqual(out[0].device.type, "cuda")

    def test_reference(self):
        self.assertTrue(torch.equal(self.u.cpu().npu(), self.u))


if __name__ == "__main__":
    unittest.main()
