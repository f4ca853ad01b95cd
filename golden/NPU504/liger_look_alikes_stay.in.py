# A module of the project's own named like Liger's, and a string that names Liger: no import of Liger-Kernel.
from my_models.liger_like import RMSNorm

norm = RMSNorm(4096)
BACKENDS = {"liger_kernel": False}
