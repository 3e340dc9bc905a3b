//! What the workspace's tests share. Not published.
