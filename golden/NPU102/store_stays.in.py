class Wrapper:
    def __init__(self):
        self.is_cuda = False
