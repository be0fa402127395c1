"""Reading and writing files: Parquet, atomic writes and seals, text files, downloads, the Hub."""
