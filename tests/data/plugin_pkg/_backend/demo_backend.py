"""A minimal PEP 517 backend: builds a wheel of the packages in [tool.demo-backend].

Only what ``pip install <folder>`` needs: ``build_wheel`` (pip builds the
wheel in place, then installs it).  The wheel carries METADATA, WHEEL,
entry_points.txt and RECORD, which is all importlib.metadata reads.
"""

import base64
import hashlib
import os
import sys
import zipfile

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def _project():
    with open("pyproject.toml", "rb") as fh:
        data = tomllib.load(fh)
    return data["project"], data["tool"]["demo-backend"]


def get_requires_for_build_wheel(config_settings=None):
    return []


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project, tool = _project()
    dist = project["name"].replace("-", "_")
    version = project["version"]
    info = f"{dist}-{version}.dist-info"
    files = {}
    for package in tool["packages"]:
        for folder, _, names in os.walk(package):
            for name in sorted(names):
                if "__pycache__" in folder or name.endswith(".pyc"):
                    continue
                path = os.path.join(folder, name)
                with open(path, "rb") as fh:
                    files[path.replace(os.sep, "/")] = fh.read()
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '')}",
        *(f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])),
    ]
    files[f"{info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: demo_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode()
    groups = project.get("entry-points", {})
    entry_points = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in groups.items()
    )
    files[f"{info}/entry_points.txt"] = entry_points.encode()
    record = [_record_line(path, data) for path, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel_name = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w") as whl:
        for path, data in files.items():
            whl.writestr(path, data)
    return wheel_name
