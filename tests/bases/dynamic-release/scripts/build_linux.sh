#!/bin/sh
echo build on linux
