def pick(a, b, c):
    return a or b or c
