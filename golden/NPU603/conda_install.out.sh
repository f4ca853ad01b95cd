# TODO(ascend-port): NPU603 [low] conda installs a CUDA build of pytorch (pytorch), and torch-npu has no conda package: install torch (the CPU build) and torch-npu of the same release with pip
# pytorch-cuda=12.1 removed by ascend-port NPU600: selects the CUDA build of pytorch; torch_npu needs the CPU build
conda install -y pytorch torchvision torchaudio -c pytorch -c nvidia
# TODO(ascend-port): NPU617 [low] cudatoolkit=11.8: CUDA toolkit; CANN provides the Ascend runtime; drop it from this install step
conda install -y cudatoolkit=11.8
mamba install -c conda-forge numpy scipy
conda install pytorch torchvision cpuonly -c pytorch
