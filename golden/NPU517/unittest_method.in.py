import unittest

import torch

import selective_scan_cuda


class TestSelectiveScan(unittest.TestCase):
    def setUp(self):
        self.u = torch.randn(2, 4, 8).cuda()

    def test_forward(self):
        out = selective_scan_cuda.fwd(self.u, self.u, None)
        self.assertEqual(out[0].device.type, "cuda")

    def test_reference(self):
        self.assertTrue(torch.equal(self.u.cpu().cuda(), self.u))


if __name__ == "__main__":
    unittest.main()
