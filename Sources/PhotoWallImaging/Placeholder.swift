// imaging
