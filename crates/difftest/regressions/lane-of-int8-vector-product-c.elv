def s = DFNF ;
  try(unroll @ innermost(isReduce)) ;;
  lowerToC
