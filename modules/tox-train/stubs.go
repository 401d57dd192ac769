package main

func trainAHR() error       { return nil }
func trainDICTrank() error  { return nil }
func trainKEsMIEs() error   { return nil }
func trainMitDys() error    { return nil }
func trainClinical() error  { return nil }
func trainMultitask() error { return nil }
