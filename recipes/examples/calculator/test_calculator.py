import unittest

from calculator import average, total


class CalculatorTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(total([1, 2, 3]), 6)

    def test_average(self):
        self.assertEqual(average([2, 4, 6]), 4)

    def test_average_of_one_value(self):
        self.assertEqual(average([5]), 5)

    def test_average_of_nothing(self):
        with self.assertRaises(ValueError):
            average([])


if __name__ == "__main__":
    unittest.main()
