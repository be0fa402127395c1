"""Reading corpus text from plain, gzip, tar and zip files: one clear message per kind of bad archive."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

import pytest

from plmfair.errors import DataError
from plmfair.io.text_files import read_text_lines

BODY = b"Une phrase .\nUne autre phrase .\n"


def _tgz(path, members: dict[str, bytes], links: dict[str, tuple[str, bytes]] | None = None):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, (target, kind) in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tf.addfile(info)
    return path


def test_every_kind_of_file_gives_its_lines(tmp_path):
    (tmp_path / "a.txt").write_bytes(BODY)
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(BODY))
    _tgz(tmp_path / "a.tgz", {"dev/a.fr": BODY})
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as zf:
        zf.writestr("dev/a.fr", BODY)
    for path, member in (("a.txt", None), ("a.txt.gz", None), ("a.tgz", "dev/a.fr"), ("a.zip", "dev/a.fr")):
        assert read_text_lines(tmp_path / path, member)[0] == ["Une phrase .", "Une autre phrase ."]


def test_a_truncated_archive_says_so(tmp_path):
    whole = _tgz(tmp_path / "whole.tgz", {"dev/a.fr": BODY * 2000}).read_bytes()
    (tmp_path / "cut.tgz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match=r"cut.tgz: the archive ends early .*truncated download\? delete it"):
        read_text_lines(tmp_path / "cut.tgz", "dev/a.fr")
    gz = gzip.compress(BODY * 2000)
    (tmp_path / "cut.gz").write_bytes(gz[: len(gz) // 2])
    with pytest.raises(DataError, match=r"cut.gz: the gzip file ends early"):
        read_text_lines(tmp_path / "cut.gz")


def test_a_text_file_named_gz_is_named(tmp_path):
    (tmp_path / "plain.gz").write_bytes(BODY)
    with pytest.raises(DataError, match=r"plain.gz: named .gz but not gzip-compressed; rename it"):
        read_text_lines(tmp_path / "plain.gz")


@pytest.mark.parametrize("kind, word", [(tarfile.SYMTYPE, "a symbolic link"), (tarfile.LNKTYPE, "a hard link")])
def test_a_link_member_is_named_as_a_link(tmp_path, kind, word):
    path = _tgz(tmp_path / "l.tgz", {"dev/a.fr": BODY}, links={"dev/b.fr": ("dev/a.fr", kind)})
    with pytest.raises(DataError, match=rf"l.tgz:dev/b.fr: the member is {word}, not a file"):
        read_text_lines(path, "dev/b.fr")


def test_a_zip_with_two_members_of_one_name_reads_neither(tmp_path):
    with pytest.warns(UserWarning), zipfile.ZipFile(tmp_path / "d.zip", "w") as zf:  # zipfile warns of the duplicate
        zf.writestr("dev/a.fr", BODY)
        zf.writestr("dev/a.fr", b"other\n")
    with pytest.raises(DataError, match=r"d.zip:dev/a.fr: the archive holds 2 members of that name"):
        read_text_lines(tmp_path / "d.zip", "dev/a.fr")
