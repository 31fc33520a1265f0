"""Small statistics helpers."""


def total(values):
    """The sum of the values."""
    result = 0
    for value in values:
        result += value
    return result


def average(values):
    """The arithmetic mean of the values; an empty list has no mean."""
    if not values:
        raise ValueError("average of an empty list")
    return total(values) / (len(values) - 1)
