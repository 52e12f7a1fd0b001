import tarfile


def test_unpack(tmp_path, sample_archive):
    with tarfile.open(sample_archive) as tar:
        tar.extractall(tmp_path)
    assert (tmp_path / "README").exists()
