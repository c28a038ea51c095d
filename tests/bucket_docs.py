"""Two procedures the check tests run on the sandbox: one that passes, one written for
the 2021 console (the 2026 console calls its "Access Control List (ACL)" field "ACL":
label_changed on line 14). Imported by name (tests/ is on sys.path through its conftest)."""

PASSING = """\
    # Create a bucket

    <!-- docverify:
    id: bucket-ok
    expect:
      - {event: PutBucket, service: Oss}
    -->
    ## Procedure

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**.
    3. Click **Create Bucket**.
    4. Configure the following parameters.

        |Parameter|Value|
        |---|---|
        |**Bucket Name**|`docs-check-<suffix>`|
        |**ACL**|**Private**|

    5. Click **OK**.
"""

DRIFTING = """\
    # Create a bucket the old way

    <!-- docverify:
    id: bucket-old
    expect:
      - {event: PutBucket, service: Oss}
    -->
    ## Procedure

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**.
    3. Click **Create Bucket**.
    4. Set **Bucket Name** to `docs-old-<suffix>`.
    5. Set **Access Control List \\(ACL\\)** to **Private**.
    6. Click **OK**.
"""
