//! The kernel log and the platform files, observed through the host seam:
//! read live from a root (a recorded `/dev/kmsg` as a file), recorded into a
//! capture and replayed the same; hidden by `dmesg_restrict` it is
//! unobservable with why; WSL2's files and a container's driver mounts.
#![allow(clippy::disallowed_methods)] // tests write temporary roots

use gpukb_agent::host::{CaptureData, Host, HostError, LiveOptions, Recorded};
use gpukb_agent::{fingerprint, Settings};
use gpukb_facts::fingerprint::{KernelEventKind, Observed, Source};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Only files: no NVML, no CUDA (their answers would come from this machine).
fn files_only() -> Settings {
    Settings {
        nvml_api: false,
        cuda_api: false,
        cuda_init: false,
        ..Settings::default()
    }
}

fn write(root: &Path, p: &str, text: &str) {
    let f = root.join(p.trim_start_matches('/'));
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

const KMSG: &str = "6,1,0,-;Linux version 6.8.0-90-generic\n\
6,2,1200,-;pci 0000:3b:00.0: [10de:2335] type 00 class 0x030200\n\
3,1801,5821331442,-;NVRM: GPU at PCI:0000:3b:00: GPU-6c4f2f1a-2b6d-11ee-a1b2-0242ac120002\n\
3,1803,5821331471,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
6,1804,5821331500,-;usb 1-1: new high-speed USB device\n";

#[test]
fn kernel_log_is_read_recorded_and_replayed() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "/dev/kmsg", KMSG);
    write(
        root.path(),
        "/proc/sys/kernel/random/boot_id",
        "0f4b2c1e-8c1d-4a52-9d35-2c6b7f1e9a10\n",
    );
    let host = Host::live(LiveOptions {
        root: root.path().into(),
        env: Some(BTreeMap::new()),
        ..LiveOptions::default()
    })
    .recording();
    let host = Arc::new(host);
    let fp = fingerprint(host.clone(), &files_only());
    let Observed::Found { value, source } = &fp.kernel_log else {
        panic!("kernel log not found: {:?}", fp.kernel_log)
    };
    assert_eq!(source, &Source::file("/dev/kmsg"));
    assert_eq!(value.records, 5, "every record is read");
    assert_eq!(
        value.boot_id.as_deref(),
        Some("0f4b2c1e-8c1d-4a52-9d35-2c6b7f1e9a10")
    );
    assert_eq!(value.events.len(), 1, "{:?}", value.events);
    let e = &value.events[0];
    assert_eq!((e.kind, e.code), (KernelEventKind::Xid, Some(79)));
    assert_eq!(e.gpu, "PCI:0000:3b:00");
    assert_eq!(value.fell_off_bus().count(), 1);

    // The capture keeps only the driver's records, and replays to the same facts.
    let cap = host.capture().unwrap();
    let kept = serde_json::to_string(&cap.journal.answers["kernel_log"]).unwrap();
    assert!(kept.contains("Xid (PCI:0000:3b:00): 79"), "{kept}");
    assert!(
        !kept.contains("USB"),
        "other records are not recorded: {kept}"
    );
    let dir = tempfile::tempdir().unwrap();
    cap.write(dir.path()).unwrap();
    let replayed = fingerprint(Arc::new(Host::replay(dir.path()).unwrap()), &files_only());
    assert_eq!(replayed.kernel_log, fp.kernel_log);
}

#[test]
fn a_restricted_kernel_log_is_unobservable_with_why() {
    let mut cap = CaptureData::default();
    cap.journal.format = gpukb_agent::host::CAPTURE_FORMAT;
    cap.journal.answers.insert(
        "kernel_log".into(),
        Recorded::Failed(HostError::Io {
            path: "/dev/kmsg".into(),
            message: "Operation not permitted (os error 1)".into(),
        }),
    );
    let restrict = "/proc/sys/kernel/dmesg_restrict";
    cap.journal.files.insert(restrict.into(), Recorded::Ok(2));
    cap.files.insert(restrict.into(), b"1\n".to_vec());
    cap.journal.commands.insert(
        "journalctl -k -b -o json --no-pager -q --grep NVRM|fallen off the bus".into(),
        Recorded::Absent,
    );
    let dir = tempfile::tempdir().unwrap();
    cap.write(dir.path()).unwrap();
    let fp = fingerprint(Arc::new(Host::replay(dir.path()).unwrap()), &files_only());
    match &fp.kernel_log {
        Observed::Unobservable { reason, .. } => {
            assert!(reason.contains("dmesg_restrict = 1"), "{reason}");
            assert!(reason.contains("journalctl is not installed"), "{reason}");
        }
        o => panic!("expected unobservable, got {o:?}"),
    }
    // A capture that never asked (an older gpukb): unobservable too, never absent or empty.
    cap.journal.answers.remove("kernel_log");
    let old = tempfile::tempdir().unwrap();
    cap.write(old.path()).unwrap();
    let fp = fingerprint(Arc::new(Host::replay(old.path()).unwrap()), &files_only());
    assert!(
        matches!(fp.kernel_log, Observed::Unobservable { .. }),
        "{:?}",
        fp.kernel_log
    );
}

#[test]
fn wsl2_files_and_a_linux_driver_inside() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "/proc/sys/kernel/osrelease",
        "5.15.167.4-microsoft-standard-WSL2\n",
    );
    write(r, "/usr/lib/wsl/lib/libcuda.so.1", "");
    write(r, "/usr/lib/wsl/lib/libdxcore.so", "");
    write(
        r,
        "/etc/ld.so.conf.d/ld.wsl.conf",
        "# This file was automatically generated by WSL.\n/usr/lib/wsl/lib\n",
    );
    write(
        r,
        "/var/lib/dpkg/status",
        "Package: nvidia-driver-580\nStatus: install ok installed\nVersion: 580.95.05-0ubuntu1\n\n",
    );
    write(r, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "");
    std::os::unix::fs::symlink(
        "libcuda.so.580.95.05",
        r.join("usr/lib/x86_64-linux-gnu/libcuda.so.1"),
    )
    .unwrap();
    let fp = fingerprint(Arc::new(Host::root_dir(r)), &files_only());
    let w = fp.platform.wsl.value().expect("WSL2 facts");
    assert_eq!(
        w.kernel.value().map(String::as_str),
        Some("5.15.167.4-microsoft-standard-WSL2")
    );
    assert_eq!(
        w.lib_dir.value().unwrap(),
        &["libcuda.so.1".to_string(), "libdxcore.so".to_string()]
    );
    assert_eq!(
        w.ld_conf.value().unwrap(),
        &["/usr/lib/wsl/lib".to_string()]
    );
    assert_eq!(
        w.driver_packages.value().unwrap()[0].name,
        "nvidia-driver-580"
    );
    assert_eq!(
        w.foreign_libcuda.value().unwrap(),
        &["/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05".to_string()]
    );

    // Native Linux: absent, not empty.
    let native = tempfile::tempdir().unwrap();
    write(
        native.path(),
        "/proc/sys/kernel/osrelease",
        "6.8.0-90-generic\n",
    );
    let fp = fingerprint(Arc::new(Host::root_dir(native.path())), &files_only());
    assert!(
        matches!(fp.platform.wsl, Observed::Absent { .. }),
        "{:?}",
        fp.platform.wsl
    );
}

#[test]
fn a_containers_driver_mounts() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "/proc/self/mountinfo",
        "618 593 0:160 / / rw,relatime master:253 - overlay overlay rw\n\
640 618 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw\n",
    );
    let fp = fingerprint(Arc::new(Host::root_dir(root.path())), &files_only());
    let m = fp.platform.driver_mounts.value().expect("mountinfo read");
    assert_eq!(m.len(), 1);
    assert_eq!(
        m[0].mount_point,
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"
    );
    assert_eq!(m[0].fs_type, "ext4");
}
