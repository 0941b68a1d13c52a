// replaced by the classifier implementation
