"""Code that runs inside the sandbox. Nothing here may import the rest of `autograder`."""
