conda install -y pytorch torchvision torchaudio pytorch-cuda=12.1 -c pytorch -c nvidia
conda install -y cudatoolkit=11.8
mamba install -c conda-forge numpy scipy
conda install pytorch torchvision cpuonly -c pytorch
