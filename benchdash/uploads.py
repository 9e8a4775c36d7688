"""Uploads too big for memory are spooled to a file that has no name on disk.

Django's own handler spools to a named temporary file and deletes it when the
request ends; a web process killed mid-upload (kill -9, the OOM killer, a
timeout) never gets there, and the file stays. Here the file is unlinked from
the moment it is opened (O_TMPFILE where the kernel has it), so whatever
happens to the process, the kernel frees the space when its descriptor closes.
Nothing in benchdash needs the upload's path: bundles are read from the file
object.
"""

from __future__ import annotations

import tempfile
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler


class UnnamedTemporaryUploadedFile(UploadedFile):
    """An uploaded file kept in an anonymous temporary file (no ``temporary_file_path``)."""

    def __init__(
        self, name: str, content_type: str, size: int, charset: str | None, content_type_extra: Any = None
    ) -> None:
        # Closed with the upload (Django closes request files when the response ends).
        file = tempfile.TemporaryFile(suffix=".upload", dir=settings.FILE_UPLOAD_TEMP_DIR)  # noqa: SIM115
        super().__init__(file, name, content_type, size, charset, content_type_extra)


class UnnamedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    def new_file(self, *args: Any, **kwargs: Any) -> None:
        FileUploadHandler.new_file(self, *args, **kwargs)
        self.file = UnnamedTemporaryUploadedFile(  # type: ignore[assignment]  # the stubs name the parent class only
            self.file_name or "", self.content_type or "", 0, self.charset, self.content_type_extra
        )
