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


class TestScanOp(unittest.TestCase):
    # the tensors are made on CUDA by setUp: the test of the custom op is a CUDA test too
    def setUp(self):
        self.x = torch.randn(4, 8).npu()

    @unittest.skipUnless(torch.cuda.is_available(), "tests the CUDA kernel torch.ops.scan_ops.scan: none on the NPU")
    def test_scan_op(self):
        torch.ops.scan_ops.scan(self.x)

    def test_cumsum(self):
        self.assertEqual(self.x.cumsum(0).shape, self.x.shape)


if __name__ == "__main__":
    unittest.main()
