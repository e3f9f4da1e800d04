# SPDX-License-Identifier: GPL-2.0
#
# kunit.py --qemu_config for scripts/kunit.sh: the x86_64 machine of
# kunit.py's own qemu_configs/x86_64.py, except that the kernel command line
# ends with "--". kunit.py appends "kunit_shutdown=reboot" after it, which
# therefore goes to init as an argument instead of to the kernel: the
# kernel does not stop when the suites are done but runs /init from the
# initramfs kunit.sh passes (-initrd), which asks kmemleak for a scan,
# prints it and reboots (kunit/leakcheck-init.c); with -no-reboot that ends
# QEMU as kunit_shutdown=reboot would have.
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 --',
			   extra_qemu_params=['-bios', 'qboot.rom'])
