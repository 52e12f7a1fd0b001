"""Program analysis on the Python syntax tree, used by the offline analyst."""
