"""Build hook for the cffi extension; all metadata lives in pyproject.toml."""
from setuptools import setup
from setuptools.command.build_py import build_py

# Build-time scripts that must not end up inside the installed package.
_BUILD_ONLY = {("blosckit.native", "build_native")}


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if (m[0], m[1]) not in _BUILD_ONLY]


setup(
    # a file path, so that building never imports the package
    cffi_modules=["blosckit/native/build_native.py:ffibuilder"],
    cmdclass={"build_py": BuildPy},
    # cffi builds the module against the limited API (_native.abi3.so): tag
    # the wheel to match, so one wheel serves every CPython from 3.11 on
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
