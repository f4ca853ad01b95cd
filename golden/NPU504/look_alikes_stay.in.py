import numba
from numba import njit
from mylib import cupy_like

cupy = "not the library"
